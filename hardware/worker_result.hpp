#pragma once
// The parent's side of a worker run, shared by the cpu and CUDA evaluators: a private run
// folder, and what the sandboxed worker did (exit, signal, timeout, memory, its JSON line)
// turned into a result.
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "core/eval_result.hpp"
#include "hardware/sandbox.hpp"

namespace kmcts {

/// A result that is a failure with a one-line message and the full log.
EvalResult failed_result(Verdict verdict, std::string message, std::string log = {});

/// `confinement` (details.confinement of a CPU or CUDA evaluation) with the kernel hosts' own
/// part: where the kernel offers Landlock, each host reads only the system's folders and its
/// kernel (worker/host_serve.hpp; a host that cannot take it fails its evaluation).
std::string with_host_files(const std::string& confinement);

/// "1.23 ms", "45.6 us", "789 ns".
std::string format_ns(double ns);

/// A fresh private folder for one worker run, <tmp>/<prefix>-XXXXXX (the worker's cwd), with
/// private copies of both shared objects: distinct files, so dlopen gives distinct handles
/// even when the candidate is byte-identical to the reference, and a concurrent cache
/// rewrite cannot touch them. Removed with everything in it on destruction. While it lives,
/// its process holds a lock on the folder's `owner.lock`, so that a folder a killed process left
/// behind can be told from one in use (reclaim_worker_folders).
class WorkerFolder {
 public:
  /// Throws std::runtime_error / std::filesystem::filesystem_error when it cannot be made.
  WorkerFolder(const std::string& prefix, const std::string& reference_so, const std::string& candidate_so);
  ~WorkerFolder();
  WorkerFolder(const WorkerFolder&) = delete;
  WorkerFolder& operator=(const WorkerFolder&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  // Paths relative to the folder, where the worker runs: a confined worker (another uid) may
  // not be allowed to traverse the folder's ancestors (a private TMPDIR), only to use its cwd.
  std::string reference() const { return "./reference.so"; }
  std::string candidate() const { return "./candidate.so"; }
  /// Writes a job file into the folder; returns its path relative to the folder.
  std::string write_job(const std::string& name, const nlohmann::json& job) const;

  /// Limits for a worker: the wall clock, output room for the raw samples whatever their
  /// number, and a CPU-time backstop (an orphaned worker cannot spin forever).
  static SandboxLimits limits(double timeout_s, int max_samples);

 private:
  std::filesystem::path dir_;
  int lock_fd_ = -1;
};

/// Removes the <tmp>/<prefix>-* folders no live process owns (left by a process killed with
/// SIGKILL, whose destructors never ran); returns how many. A folder whose lock is held, or too
/// young to have its lock yet, stays.
int reclaim_worker_folders(const std::string& prefix);

/// Maps what the sandboxed worker did to a result: its last stdout line is a JSON object
/// with "verdict", "message", "details" and, when ok, "reference_samples_ns",
/// "candidate_samples_ns" and "counters". `worker` names it in messages.
EvalResult result_from_worker(const SandboxResult& run, double timeout_s, const std::string& worker = "cpu worker");

}  // namespace kmcts
