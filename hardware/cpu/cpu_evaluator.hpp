#pragma once
// The "cpu" evaluator: compiles variants with the host compiler (cached) and runs
// kmcts-cpu-worker in a sandboxed child per measurement, which checks the candidate
// against the reference and times both, interleaved, in one process.
#include <cstdint>
#include <filesystem>
#include <string>

#include "hardware/compiler.hpp"
#include "hardware/evaluator.hpp"
#include "hardware/measure_settings.hpp"
#include "hardware/sandbox.hpp"

namespace kmcts {

/// The shared measurement settings (evaluator.*) and the cpu evaluator's own.
struct CpuEvaluatorSettings : MeasureSettings {  // evaluator.flush_mb goes to timing.flush_mb
  std::string compiler = "c++";
  std::string cpu_worker;  // "" = next to this executable

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
  KernelCompiler compiler_;
  std::filesystem::path worker_;
  LazyReference reference_;
};

/// The host compiler's flavour for cpu kernels: -O3 -march=native, the kmcts_cpu.h ABI.
CompilerFlavor cpu_compiler_flavor();


}  // namespace kmcts
