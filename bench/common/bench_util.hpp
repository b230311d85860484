#pragma once
// What every benchmark shares: a scratch folder for run directories, the machine and
// command to record next to the figures, and distribution-free statistics over seeds.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "core/cpus.hpp"

namespace kmcts::bench {

namespace fs = std::filesystem;

/// A folder for run directories, removed with everything in it when the object goes.
class Scratch {
 public:
  explicit Scratch(const fs::path& parent, const std::string& name)
      : dir_(parent / (name + "-" + std::to_string(::getpid()))) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~Scratch() {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  fs::path run_dir(const std::string& name) const { return dir_ / name; }

 private:
  fs::path dir_;
};

inline std::string first_line_with(const std::string& file, const std::string& key) {
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key, 0) == 0) return line;
  return "";
}

inline std::string after(const std::string& line, char sep) {
  size_t at = line.find(sep);
  std::string v = at == std::string::npos ? "" : line.substr(at + 1);
  v.erase(0, v.find_first_not_of(" \t\""));
  while (!v.empty() && (v.back() == '"' || v.back() == ' ')) v.pop_back();
  return v;
}

/// Recorded with every result: figures from different machines are not comparable.
inline nlohmann::json machine() {
  return {{"cpu", after(first_line_with("/proc/cpuinfo", "model name"), ':')},
          {"nproc", std::thread::hardware_concurrency()},
          {"usable_cpus", usable_cpus()},
          {"os", after(first_line_with("/etc/os-release", "PRETTY_NAME"), '=')}};
}

inline std::string utc_date() {
  std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buf;
}

inline std::string command_line(int argc, char** argv) {
  std::string out;
  for (int i = 0; i < argc; ++i) out += (i ? " " : "") + std::string(argv[i]);
  return out;
}

inline void write_text(const fs::path& path, const std::string& text) {
  if (!path.parent_path().empty()) fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

/// The record every result starts with: when, where and how it was measured.
inline nlohmann::json record(const std::string& benchmark, int argc, char** argv) {
  return {{"benchmark", benchmark}, {"date", utc_date()}, {"machine", machine()}, {"command", command_line(argc, argv)}};
}

/// The record as the markdown line under a result's title.
inline std::string record_line(const nlohmann::json& r) {
  const auto& m = r.at("machine");
  return "Machine: " + m.at("cpu").get<std::string>() + ", " + std::to_string(m.at("nproc").get<int>()) + " cores, " +
         m.at("os").get<std::string>() + ". Command: `" + r.at("command").get<std::string>() + "`\n\n";
}

/// Writes the result as JSON (the markdown included) and as markdown, and prints the markdown.
inline void publish(nlohmann::json result, const std::string& md, const fs::path& json_path, fs::path md_path) {
  if (md_path.empty()) md_path = fs::path(json_path).replace_extension(".md");
  result["markdown"] = md;
  write_text(json_path, result.dump(2) + "\n");
  write_text(md_path, md);
  std::cout << md << "\nwrote " << json_path.string() << " and " << md_path.string() << "\n";
}

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Median with its distribution-free 95% interval from order statistics: with n samples,
/// [X_(l), X_(n+1-l)] covers the true median with probability 1 - 2 P(Bin(n, 1/2) < l), and l
/// is the largest rank keeping that >= 0.95. Chosen over a bootstrap because it stays exact
/// when values are censored: a censored seed sorts above every finite one, so an interval end
/// that lands on one simply reads "> budget".
struct MedianInterval {
  double median = 0, low = 0, high = 0;
  double coverage = 0;  // the interval's exact coverage
};

/// P(Bin(n, 1/2) <= k), accumulated in log space so n in the thousands does not underflow.
inline double binomial_half_cdf(size_t n, size_t k) {
  double total = 0;
  for (size_t i = 0; i <= k && i <= n; ++i)
    total += std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) - n * std::log(2.0));
  return total;
}

inline MedianInterval median_interval(std::vector<double> x) {
  MedianInterval r;
  if (x.empty()) return r;
  std::sort(x.begin(), x.end());
  const size_t n = x.size();
  r.median = n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
  auto cdf = [n](size_t k) { return binomial_half_cdf(n, k); };
  size_t l = 1;  // 1-based rank
  while (l + 1 <= n / 2 && 1 - 2 * cdf(l) >= 0.95) ++l;
  r.coverage = l >= 2 ? 1 - 2 * cdf(l - 1) : 1 - 2 * std::pow(0.5, n);
  r.low = x[l - 1];
  r.high = x[n - l];
  return r;
}

}  // namespace kmcts::bench
