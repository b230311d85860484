#include "hardware/worker_result.hpp"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "hardware/worker/landlock.hpp"

#include "core/text.hpp"
#include "hardware/confine.hpp"
#include "core/cpus.hpp"

namespace kmcts {

std::string with_host_files(const std::string& confinement) {
  if (landlock_abi() == 0) return confinement;
  return (confinement.empty() ? "" : confinement + ", ") + "kernel hosts read only system folders (landlock)";
}

using nlohmann::json;

EvalResult failed_result(Verdict verdict, std::string message, std::string log) {
  EvalResult r;
  r.verdict = verdict;
  r.message = std::move(message);
  r.log = std::move(log);
  return r;
}

std::string format_ns(double ns) {
  if (ns >= 1e6) return fmt::format("{:.3g} ms", ns * 1e-6);
  if (ns >= 1e3) return fmt::format("{:.3g} us", ns * 1e-3);
  return fmt::format("{:.3g} ns", ns);
}

namespace {

constexpr const char* kOwnerLock = "owner.lock";
// A folder without its lock file yet may be one another process is making this instant.
constexpr auto kLockGrace = std::chrono::seconds(60);

}  // namespace

WorkerFolder::WorkerFolder(const std::string& prefix, const std::string& reference_so, const std::string& candidate_so) {
  std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (!mkdtemp(pattern.data()))
    throw std::runtime_error("cannot create a temporary folder under " + std::filesystem::temp_directory_path().string());
  dir_ = pattern;
  // A confined worker may run as another user (nobody): it reads the folder, and writes nothing.
  std::filesystem::permissions(dir_, std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                                         std::filesystem::perms::group_exec | std::filesystem::perms::others_read |
                                         std::filesystem::perms::others_exec);
  lock_fd_ = ::open((dir_ / kOwnerLock).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_fd_ >= 0) ::flock(lock_fd_, LOCK_EX);  // a fresh file: no one else holds it
  std::filesystem::copy_file(reference_so, dir_ / "reference.so");
  std::filesystem::copy_file(candidate_so, dir_ / "candidate.so");
}

WorkerFolder::~WorkerFolder() {
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

int reclaim_worker_folders(const std::string& prefix) {
  namespace fs = std::filesystem;
  int removed = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::temp_directory_path(), ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() != prefix.size() + 7 || name.rfind(prefix + "-", 0) != 0 || !entry.is_directory(ec)) continue;
    const int fd = ::open((entry.path() / kOwnerLock).c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {  // no lock file: reclaim it only once it is too old to be one being made
      const auto age = fs::file_time_type::clock::now() - fs::last_write_time(entry.path(), ec);
      if (ec || age < kLockGrace) continue;
    } else {
      const bool owned = ::flock(fd, LOCK_EX | LOCK_NB) != 0;
      ::close(fd);
      if (owned) continue;
    }
    if (fs::remove_all(entry.path(), ec) > 0 && !ec) ++removed;
  }
  return removed;
}

std::string WorkerFolder::write_job(const std::string& name, const json& job) const {
  const std::string path = (dir_ / name).string();
  std::ofstream out(path);
  out << job.dump(1);
  if (!out) throw std::runtime_error("cannot write " + path);
  return name;  // relative: the worker runs in the folder
}

SandboxLimits WorkerFolder::limits(double timeout_s, int max_samples) {
  SandboxLimits limits;
  limits.timeout_s = timeout_s;
  // Room for the result's raw samples (about 20 bytes each) whatever max_samples is, while
  // a kernel that prints in a loop still cannot flood the parent's memory or the run store.
  limits.max_output_bytes = std::max<size_t>(1u << 20, static_cast<size_t>(max_samples) * 64 + (64u << 10));
  // A backstop only (the wall clock fires first): even a kernel using every core for the
  // whole timeout stays under it.
  limits.cpu_seconds = timeout_s * usable_cpus() + 5;
  limits.confine = confinement_enabled();  // the worker runs the candidate's code
  return limits;
}

EvalResult result_from_worker(const SandboxResult& run, double timeout_s, const std::string& worker) {
  const std::string& log = run.err;
  if (run.timed_out)
    return failed_result(Verdict::timeout, fmt::format("timeout: no result within {:g} s", timeout_s), log);
  if (run.memory_exceeded)
    return failed_result(Verdict::crash, fmt::format("crash: resident memory over the limit ({}), killed", worker), log);
  if (run.signal == SIGXCPU)
    return failed_result(Verdict::timeout, "timeout: CPU time limit exceeded (SIGXCPU)", log);
  if (run.signal != 0) {
    std::string name = signal_name(run.signal);
    EvalResult r = failed_result(Verdict::crash,
                           "crash: " + name + (run.signal == SIGKILL ? " (out of memory?)" : ""), log);
    r.details = {{"signal", name}, {"signal_number", run.signal}};
    return r;
  }
  // The worker prints one JSON line last; take the last non-empty line.
  std::string text = run.out;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  json reply = json::parse(text.substr(text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1), nullptr,
                           /*allow_exceptions=*/false);
  if (reply.is_discarded() || !reply.is_object() || !reply.contains("verdict")) {
    // The dynamic loader's failure (exit 127, e.g. no libcuda.so.1 on a machine without a
    // GPU driver): the machine's fault, not the candidate's.
    if (run.exit_code == 127 && log.find("error while loading shared libraries") != std::string::npos)
      return failed_result(Verdict::infra_error, fmt::format("the {} cannot start: {}", worker, first_line(log)), log);
    EvalResult r = failed_result(Verdict::crash,
                           run.exit_code == 0 ? "crash: the worker exited without a result (did the kernel call exit()?)"
                                              : fmt::format("crash: the worker exited with code {}", run.exit_code),
                           log);
    r.details = {{"exit_code", run.exit_code}};
    return r;
  }
  EvalResult r;
  try {
    r.verdict = verdict_from_string(reply.at("verdict").get<std::string>());
  } catch (const std::exception& e) {
    return failed_result(Verdict::infra_error, worker + ": " + e.what(), log);
  }
  r.log = log;
  r.details = reply.value("details", json::object());
  if (r.verdict != Verdict::ok) {
    std::string message = reply.value("message", std::string());
    r.message = (r.verdict == Verdict::wrong_answer ? "wrong answer: " : "") + message;
    return r;
  }
  r.reference = TimingStats::from_samples(reply.value("reference_samples_ns", std::vector<double>{}));
  r.candidate = TimingStats::from_samples(reply.value("candidate_samples_ns", std::vector<double>{}));
  if (r.reference.samples() == 0 || r.candidate.samples() == 0 || r.candidate.median_ns <= 0)
    return failed_result(Verdict::infra_error, worker + ": ok without timing samples", log);
  r.speedup = r.reference.median_ns / r.candidate.median_ns;
  r.details["counters"] = reply.value("counters", json::object());
  r.message = fmt::format("ok: speedup {:.3f}x (reference {}, candidate {}, {} samples)", r.speedup,
                          format_ns(r.reference.median_ns), format_ns(r.candidate.median_ns), r.candidate.samples());
  return r;
}

}  // namespace kmcts
