#include "hardware/cuda/deep_profile.hpp"

#include <unistd.h>

#include <fstream>
#include <functional>
#include <system_error>
#include <thread>

#include "core/error.hpp"
#include "core/hash.hpp"
#include "core/text.hpp"
#include "hardware/cuda/bottleneck.hpp"
#include "hardware/cuda/hw_counters.hpp"

namespace kmcts::cuda {

DeepProfiles::DeepProfiles(const std::string& when, std::filesystem::path cache_dir)
    : all_(when == "all"), dir_(std::move(cache_dir) / "ncu") {
  if (when != "best" && when != "all")
    throw InputError("evaluator.cuda.profile_when: unknown value '" + when + "' (known: best, all)");
}

bool DeepProfiles::wanted(double speedup) {
  if (all_) return true;
  std::lock_guard lock(mutex_);
  if (best_ && speedup <= *best_) return false;
  best_ = speedup;
  return true;
}

std::string DeepProfiles::key(const std::string& source_hash, const std::string& problem, const std::string& gpu_name) {
  return sha256_hex(source_hash + "\n" + problem + "\n" + gpu_name + "\n" + counter_metric_list());
}

std::optional<nlohmann::json> DeepProfiles::cached(const std::string& key) const {
  std::ifstream in(dir_ / (key + ".json"));
  if (!in) return std::nullopt;
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;  // a torn or foreign file: profile again
  return j;
}

void DeepProfiles::store(const std::string& key, const nlohmann::json& counters) const {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  const auto tmp = dir_ / (key + ".json.tmp" + std::to_string(::getpid()) + "-" +
                           std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id())));
  {
    std::ofstream out(tmp);
    if (!out) return;
    out << counters.dump();
    if (!out) return;
  }
  std::filesystem::rename(tmp, dir_ / (key + ".json"), ec);
  if (ec) std::filesystem::remove(tmp, ec);
}

nlohmann::json with_verdicts(nlohmann::json counters, const Problem& problem, const Roofline& peaks) {
  if (counters.contains("kernels") && counters["kernels"].is_array())
    for (auto& k : counters["kernels"])
      if (auto b = bottleneck_of(k)) k["bottleneck"] = b->line, k["bottleneck_kind"] = b->kind;
  const std::string position = roofline_position(problem.flops, problem.bytes, peaks.flops_per_s, peaks.bytes_per_s);
  if (!position.empty()) counters["roofline_position"] = position;
  return counters;
}

bool DeepProfiles::from_cache(EvalResult& r, const std::string& key) const {
  auto profile = cached(key);
  if (!profile) return false;
  r.details["hw_counters"] = std::move(*profile);
  r.details["hw_counters_cached"] = true;
  return true;
}

void DeepProfiles::record(EvalResult& r, const std::string& key, const SandboxResult& run, const Problem& problem,
                          const Roofline& peaks) const {
  try {
    if (!run.exited_cleanly())
      throw std::runtime_error(run.started ? "ncu failed: " + first_line(run.err + run.out) : "cannot run ncu: " + run.error);
    r.details["hw_counters"] = with_verdicts(parse_ncu_csv(run.out), problem, peaks);
    store(key, r.details["hw_counters"]);
  } catch (const std::exception& e) {
    std::string said = run.out + run.err;
    if (said.size() > 2000) said.resize(2000);
    r.details["hw_counters_error"] = std::string(e.what()) + "; ncu said: " + said;
  }
  r.details["profile_seconds"] = run.wall_seconds;
}

}  // namespace kmcts::cuda
