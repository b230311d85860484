#pragma once
// Nsight Compute on demand (issue 30, item 2): which measurements get a deep profile, where
// profiles are cached, and the verdicts added to them. With evaluator.cuda.profile on, "best"
// (evaluator.cuda.profile_when, the default) profiles only a candidate that beats every
// measurement this evaluator made before (the seed's first, then each new best: the candidates
// the Planner expands most), "all" every correct one. A profile runs after the timing, in a
// worker run of its own under ncu, so it never feeds a measurement; its wall time is the
// result's details.profile_seconds. Profiles are cached by the candidate's source hash, the
// GPU's name and the metric list, under the cache folder's ncu/, so a resumed or repeated
// search profiles nothing twice. CUDA-free: unit-tested without a GPU.
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/eval_result.hpp"
#include "core/problem.hpp"
#include "hardware/cuda/audit.hpp"
#include "hardware/sandbox.hpp"

namespace kmcts::cuda {

class DeepProfiles {
 public:
  /// `when`: "best" or "all" (InputError naming evaluator.cuda.profile_when otherwise).
  DeepProfiles(const std::string& when, std::filesystem::path cache_dir);

  /// Whether a correct measurement of this speedup is profiled; "best" counts it as the new
  /// best when it is one (thread-safe: measurements finish on several GPUs at once).
  bool wanted(double speedup);
  /// The cache key of a candidate's profile on a GPU for a problem (`problem`: a fingerprint of
  /// what the call runs on, its shapes: the same source on other inputs is another profile).
  static std::string key(const std::string& source_hash, const std::string& problem, const std::string& gpu_name);
  std::optional<nlohmann::json> cached(const std::string& key) const;
  /// Writes atomically (a temporary file renamed); a failure to write is not an error.
  void store(const std::string& key, const nlohmann::json& counters) const;
  /// The cached profile under `key` into r.details (hw_counters, hw_counters_cached = true);
  /// false when there is none.
  bool from_cache(EvalResult& r, const std::string& key) const;
  /// An ncu run's outcome into r.details: hw_counters with the verdicts for `problem` and
  /// `peaks` (and stored under `key`), or hw_counters_error with the start of what ncu said;
  /// and its wall time, profile_seconds.
  void record(EvalResult& r, const std::string& key, const SandboxResult& run, const Problem& problem,
              const Roofline& peaks) const;

 private:
  bool all_;
  std::filesystem::path dir_;
  std::mutex mutex_;
  std::optional<double> best_;
};

/// parse_ncu_csv()'s counters with each kernel's "bottleneck" line and "bottleneck_kind"
/// (bottleneck.hpp), and the
/// call's "roofline_position" where the problem gives its FLOPs and bytes and the peaks are known.
nlohmann::json with_verdicts(nlohmann::json counters, const Problem& problem, const Roofline& peaks);

}  // namespace kmcts::cuda
