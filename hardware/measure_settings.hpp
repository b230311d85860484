#pragma once
// The measurement settings every worker-based evaluator shares (the evaluator.* options:
// limits, correctness trials, the stopping rule, input sets, seed, compile cache), and the
// job file both workers read (hardware/worker/job.hpp parses it).
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/options.hpp"
#include "core/problem.hpp"
#include "hardware/worker/job.hpp"

namespace kmcts {

struct MeasureSettings {
  double timeout_s = 60;
  int64_t memory_mb = 4096;
  double compile_timeout_s = 120;
  int correctness_trials = 5;
  worker::TimingPlan timing;  // what the worker reads: stopping rule, warm-up, input sets
  std::string cache_dir;      // "" = default_cache_dir()
  int64_t input_seed = 0;

  /// Reads the shared evaluator.* options; inconsistent values are an InputError naming them.
  static MeasureSettings from_config(const Config& config);
};

/// The job file of one worker run:
///   {"reference": ".../reference.so", "candidate": ".../candidate.so",
///    "inputs":  [{"name", "dtype": "f32"|"f64", "shape": [...], "distributions": [...]}],
///    "outputs": [{"name", "dtype", "shape"}],
///    "atol", "rtol", "correctness_trials", "input_seed",
///    "timing": worker::TimingPlan (hardware/worker/job.hpp)}
/// Evaluators add their own sections (the CUDA evaluator's "cuda").
nlohmann::json worker_job_json(const Problem& problem, const MeasureSettings& settings, const std::string& reference_so,
                               const std::string& candidate_so);

}  // namespace kmcts
