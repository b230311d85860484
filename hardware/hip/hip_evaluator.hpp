#pragma once
// The "hip" evaluator (issue 31): builds variants with hipcc for the AMD GPU's architecture
// (content-addressed cache, clang's resource remarks kept), and measures each in a fresh
// kmcts-hip-worker (the CUDA worker's sources built for HIP: the same checks, timing loop,
// kernel hosts and stopping rule) run under rocprofv3, one measurement per GPU at a time. The
// worker's provisional samples are replaced afterwards by the union of each call's records in
// its host's trace, and the candidate's records audited (rocprof_timing.hpp); then the CUDA
// evaluator's statistics: the bootstrap interval and verdict of the speedup, the hipEvent
// cross-check, the roofline audit. It needs no ROCm itself, so its logic is tested in CI
// against a stand-in rocprofv3 that replays a recorded run. Never run on an AMD GPU here.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "hardware/compiler.hpp"
#include "hardware/cuda/audit.hpp"
#include "hardware/cuda/gpu_pool.hpp"
#include "hardware/evaluator.hpp"
#include "hardware/measure_settings.hpp"
#include "hardware/sandbox.hpp"

namespace kmcts {

struct HipEvaluatorSettings : MeasureSettings {
  std::string hipcc;       // "" = $ROCM_PATH/bin/hipcc, /opt/rocm/bin/hipcc, or hipcc in PATH
  std::string arch;        // "gfx942"; "" = the first leased GPU's, from rocminfo
  std::vector<int> gpus;   // empty = every GPU agent rocminfo lists
  std::string worker;      // "" = next to this executable
  std::string rocprofv3;   // "" = found like hipcc
  std::string rocminfo;    // "" = found like hipcc
  int64_t flush_mb = 0;    // 0 = max(2 x L2, 512 MiB)
  int event_samples = 10;
  cuda::Roofline peaks;    // zeros = the worker's estimate from the device's attributes

  /// Reads evaluator.* and evaluator.hip.*; bad values are an InputError naming the option.
  static HipEvaluatorSettings from_config(const Config& config);
};

class HipEvaluator final : public Evaluator {
 public:
  /// Throws InputError naming what is missing: a problem of another kind, hipcc, the HIP worker
  /// (a build without HIP), rocprofv3, or an AMD GPU (while arch or gpus are left to rocminfo).
  HipEvaluator(Problem problem, HipEvaluatorSettings settings);

  BuildResult build(const std::string& source) override;
  EvalResult measure(const BuildResult& build) override;
  nlohmann::json describe() const override;
  int measure_slots() const override { return static_cast<int>(pool_->size()); }

  /// The worker's job file (the CUDA worker's, its plan under "cuda").
  nlohmann::json job_json(const std::string& reference_so, const std::string& candidate_so, int device) const;
  /// rocprofv3's command for the worker's run, traces into `trace_dir` (relative to its folder).
  std::vector<std::string> traced_command(const std::string& job, const std::string& trace_dir) const;

 private:
  const BuildResult& reference();

  Problem problem_;
  HipEvaluatorSettings settings_;
  std::string rocminfo_error_;
  std::optional<KernelCompiler> compiler_;
  std::filesystem::path worker_;
  std::string rocprofv3_;
  std::optional<cuda::GpuPool> pool_;
  LazyReference reference_;
};

/// The traced worker run turned into a result (exposed for tests): the worker's JSON line, its
/// samples replaced by the traces under `trace_dir` (its hosts' PID_*_trace.csv files); a
/// candidate whose records break a rule, or whose host exited cleanly without a usable trace
/// (trace_tampered), is "rejected"; a reference trace that cannot time the run is an
/// infra_error naming why; then cuda_result_from_worker's statistics.
/// Why a HIP measurement cannot be trusted here, or "" when it can: each kernel host is kept to
/// its own trace folder by Landlock (worker/host_serve.hpp), and without it (`landlock_abi` 0,
/// a kernel before 5.13) the candidate's host could rewrite the reference's trace. Confinement
/// turned off (`confine` false) is the user's choice and measures anyway.
std::string hip_trace_separation_error(bool confine, int landlock_abi);

EvalResult hip_result_from_traced_run(const SandboxResult& run, const std::filesystem::path& trace_dir,
                                      const std::string& candidate_binary, double timeout_s, const Problem& problem,
                                      const cuda::Roofline& peaks, uint64_t seed);

}  // namespace kmcts
