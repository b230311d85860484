#pragma once
// The job file the CPU evaluator writes for one worker run (see cpu_evaluator.cpp for the
// writer). Parsing is strict: a malformed job is an evaluator bug, reported as infra_error.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kmcts::worker {

struct TensorDesc {
  std::string name;
  int32_t dtype = 0;  // enum kmcts_dtype
  std::vector<int64_t> shape;
  int64_t numel = 0;
  std::vector<std::string> distributions;  // inputs only
};

/// How a worker times (the stopping rule's limits, warm-up, input sets); the parent fills it
/// from the evaluator.* options (hardware/measure_settings.hpp) and writes it into the job.
struct TimingPlan {
  double rse_target = 0.005;
  int min_samples = 20;
  int max_samples = 2000;
  double min_time_ms = 50;
  double max_time_ms = 2000;
  int warmup_calls = 3;
  double warmup_ms = 20;
  int64_t flush_mb = 16;
  int input_sets = 2;

  /// Throws nlohmann::json::exception or std::invalid_argument on a malformed plan.
  static TimingPlan from_json(const nlohmann::json& j);
};

nlohmann::json to_json(const TimingPlan& p);

struct Job {
  std::string reference;  // paths of the shared objects
  std::string candidate;
  std::vector<TensorDesc> inputs;
  std::vector<TensorDesc> outputs;
  double atol = 1e-4;
  double rtol = 1e-4;
  int correctness_trials = 5;
  uint64_t input_seed = 0;
  TimingPlan timing;

  /// Throws nlohmann::json::exception or std::invalid_argument on a malformed job.
  static Job from_json(const nlohmann::json& j);
};

}  // namespace kmcts::worker
