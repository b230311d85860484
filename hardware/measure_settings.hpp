#pragma once
// The measurement settings every worker-based evaluator shares (the evaluator.* options:
// limits, correctness trials, the stopping rule, input sets, seed, compile cache), and the
// job file both workers read (hardware/worker/job.hpp parses it).
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/options.hpp"
#include "core/problem.hpp"

namespace kmcts {

struct MeasureSettings {
  double timeout_s = 60;
  int64_t memory_mb = 4096;
  double compile_timeout_s = 120;
  int correctness_trials = 5;
  double rse_target = 0.005;
  int min_samples = 20;
  int max_samples = 2000;
  double min_time_ms = 50;
  double max_time_ms = 2000;
  int warmup_calls = 3;
  double warmup_ms = 20;
  int input_sets = 2;
  std::string cache_dir;  // "" = default_cache_dir()
  int64_t input_seed = 0;

  /// Reads the shared evaluator.* options; inconsistent values are an InputError naming them.
  static MeasureSettings from_config(const Config& config);
};

/// The job file of one worker run:
///   {"reference": ".../reference.so", "candidate": ".../candidate.so",
///    "inputs":  [{"name", "dtype": "f32"|"f64", "shape": [...], "distributions": [...]}],
///    "outputs": [{"name", "dtype", "shape"}],
///    "atol", "rtol", "correctness_trials", "input_seed",
///    "timing": {"rse_target", "min_samples", "max_samples", "min_time_ms", "max_time_ms",
///               "warmup_calls", "warmup_ms", "flush_mb" (0 here), "input_sets"}}
/// Evaluators add their own sections (the cpu evaluator's flush_mb, the CUDA one's "cuda").
nlohmann::json worker_job_json(const Problem& problem, const MeasureSettings& settings, const std::string& reference_so,
                               const std::string& candidate_so);

}  // namespace kmcts
