#pragma once
// The "cuda" evaluator: builds variants with nvcc for the GPU's architecture (cached by
// content; -Xptxas -v resources kept for the agents) on the CPU pool, and measures each in
// a fresh kmcts-cuda-worker process on a GPU leased from the pool (one measurement per GPU
// at a time). The worker checks and times; this side keeps the statistics: the bootstrap
// interval of the speedup and its verdict, the CUDA-event cross-check, the roofline audit.
// It needs no CUDA itself (the worker does), so its logic is tested in CI.
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hardware/compiler.hpp"
#include "hardware/cuda/audit.hpp"
#include "hardware/cuda/deep_profile.hpp"
#include "hardware/cuda/fault_diagnosis.hpp"
#include "hardware/cuda/gpu_pool.hpp"
#include "hardware/evaluator.hpp"
#include "hardware/measure_settings.hpp"
#include "hardware/sandbox.hpp"
#include "hardware/worker_result.hpp"

namespace kmcts {

struct CudaEvaluatorSettings : MeasureSettings {
  std::string nvcc;          // "" = $CUDA_HOME/bin/nvcc, /usr/local/cuda/bin/nvcc, or nvcc in PATH
  std::string arch;          // "sm_90"; "" = the first leased GPU's, from kmcts-cuda-probe
  std::vector<int> gpus;     // empty = every GPU the probe sees
  std::string worker;        // "" = next to this executable
  int64_t flush_mb = 0;      // 0 = max(2 x L2, 128 MiB)
  double min_clock_ratio = 0.9;
  int event_samples = 10;
  std::string protocol = "kmcts";  // or "kernelbench" (comparisons only)
  bool profile = false;            // hardware counters by ncu after an ok measurement
  std::string profile_when = "best";  // which ones: "best" (each new best) or "all"
  std::string ncu;                 // "" = found like nvcc
  cuda::FaultDiagnosis diagnosis;  // compute-sanitizer after a memory fault (fault_diagnosis.hpp)
  cuda::Roofline peaks;      // zeros = the worker's estimate from the device's attributes

  /// Reads evaluator.* and evaluator.cuda.*; bad values are an InputError naming the option.
  static CudaEvaluatorSettings from_config(const Config& config);
};

/// "0,2,3" -> {0, 2, 3}; "" -> {}. InputError naming `option` on anything else.
std::vector<int> parse_gpu_list(const std::string& text, const std::string& option);

/// nvcc's flavour: -O3 -arch=<arch> -shared -Xcompiler -fPIC -cudart shared -Xptxas -v
/// -lineinfo and the ABI headers; resources parsed from the ptxas report.
CompilerFlavor cuda_compiler_flavor(const std::string& arch);

class CudaEvaluator final : public Evaluator {
 public:
  /// Throws InputError when the problem is not a cuda problem, nvcc cannot run, the worker
  /// is missing, or no GPU is found while arch or gpus are left to detection.
  CudaEvaluator(Problem problem, CudaEvaluatorSettings settings);

  BuildResult build(const std::string& source) override;
  EvalResult measure(const BuildResult& build) override;
  nlohmann::json describe() const override;
  int measure_slots() const override { return static_cast<int>(pool_->size()); }

  /// The worker's job file; `protocol` "" = the configured one.
  nlohmann::json job_json(const std::string& reference_so, const std::string& candidate_so, int device,
                          const std::string& protocol = "") const;

 private:
  /// Hardware counters of one candidate call under ncu, into result.details["hw_counters"]
  /// (or "hw_counters_error"), in the measurement's folder.
  void profile(const WorkerFolder& folder, int device, const BuildResult& build, EvalResult& result) const;
  /// The faulting candidate's call again under compute-sanitizer (fault_diagnosis.hpp).
  void diagnose(const WorkerFolder& folder, int device, EvalResult& result) const;
  const BuildResult& reference();

  Problem problem_;
  CudaEvaluatorSettings settings_;
  nlohmann::json probe_;  // kmcts-cuda-probe's answer, when it ran
  std::optional<KernelCompiler> compiler_;
  std::filesystem::path worker_;
  std::optional<cuda::GpuPool> pool_;
  LazyReference reference_;
  std::unique_ptr<cuda::DeepProfiles> deep_;  // when evaluator.cuda.profile is on
};

/// The worker's result completed with this side's statistics (exposed for tests): the
/// bootstrap interval and verdict of the speedup, the event cross-check, the roofline
/// fraction and audit flag, the device facts.
EvalResult cuda_result_from_worker(const SandboxResult& run, double timeout_s, const Problem& problem,
                                   const cuda::Roofline& peaks, uint64_t seed);

}  // namespace kmcts
