#pragma once
// The "cpu" evaluator: compiles variants with the host compiler (cached) and runs
// kmcts-cpu-worker in a sandboxed child per measurement, which checks the candidate
// against the reference and times both, interleaved, in one process.
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>

#include "hardware/cpu/compiler.hpp"
#include "hardware/evaluator.hpp"
#include "hardware/sandbox.hpp"

namespace kmcts {

struct CpuEvaluatorSettings {
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
  int64_t flush_mb = 16;
  int input_sets = 2;
  std::string compiler = "c++";
  std::string cache_dir;   // "" = default_cache_dir()
  std::string cpu_worker;  // "" = next to this executable
  int64_t input_seed = 0;

  /// Reads the evaluator.* options; inconsistent values are an InputError naming them.
  static CpuEvaluatorSettings from_config(const Config& config);
};

class CpuEvaluator final : public Evaluator {
 public:
  /// Throws InputError when the problem is not a cpu problem, the compiler cannot run or
  /// the worker executable is missing.
  CpuEvaluator(Problem problem, CpuEvaluatorSettings settings);

  BuildResult build(const std::string& source) override;
  EvalResult measure(const BuildResult& build) override;
  nlohmann::json describe() const override;

  const std::filesystem::path& worker_path() const { return worker_; }
  /// The job file the worker reads (format documented in cpu_evaluator.cpp).
  nlohmann::json job_json(const std::string& reference_so, const std::string& candidate_so) const;

 private:
  /// Compiles the reference the first time any thread asks; later calls reuse the result.
  const BuildResult& reference();
  EvalResult run_worker(const BuildResult& candidate, const BuildResult& reference);

  Problem problem_;
  CpuEvaluatorSettings settings_;
  CpuCompiler compiler_;
  std::filesystem::path worker_;
  std::mutex reference_mutex_;
  std::optional<BuildResult> reference_;
};

/// Maps what the sandboxed worker did (exit, signal, timeout, its JSON) to a result.
/// Exposed for tests.
EvalResult result_from_worker(const SandboxResult& run, double timeout_s);

}  // namespace kmcts
