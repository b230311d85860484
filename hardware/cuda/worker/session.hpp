#pragma once
// One CUDA worker run: the device, the launch stream, the CUPTI timer, the two kernels, and
// the audit every candidate call passes. Calls go through here so each is traced, checked
// for CUDA errors and, for the candidate, audited against the ABI's rules.
#include <cuda_runtime.h>

#include <optional>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "hardware/cuda/audit.hpp"
#include "hardware/cuda/cupti/activity_timer.hpp"
#include "hardware/cuda/worker/device.hpp"
#include "hardware/cuda/worker/gpu_checks.hpp"
#include "hardware/worker/job.hpp"

namespace kmcts::worker {

using CudaKernelFn = void (*)(const kmcts_tensor*, int32_t, kmcts_tensor*, int32_t, cudaStream_t);

/// The CUDA section of the job file (cuda_evaluator.cpp writes it).
struct CudaPlan {
  int device = 0;
  size_t flush_bytes = 0;       // 0 = max(2 x L2, 128 MiB)
  double min_clock_ratio = 0.9; // samples under this fraction of the highest SM clock seen are dropped
  int event_samples = 10;       // CUDA-event cross-check samples per kernel (tracing off)
  double short_kernel_ns = 10000;  // kernels faster than this need twice min_time_ms
  // "kmcts" (the protocol above) or "kernelbench": KernelBench's loop (3 warm-up calls, then
  // 101 calls each between CUDA events after a 256 MB fill, the first dropped; scored by the
  // mean), kept to compare protocols in bench/measure, not for searches; or "profile": one
  // candidate call and nothing else, no CUPTI tracing, for a profiler (ncu) to watch.
  std::string protocol = "kmcts";
  static CudaPlan from_json(const nlohmann::json& j);
};

/// The candidate broke an ABI rule (audit.hpp); reported as verdict "rejected".
struct Rejected : std::runtime_error {
  Rejected(cuda::Violation v, std::string phase, nlohmann::json trace)
      : std::runtime_error(v.message), violation(std::move(v)), phase(std::move(phase)), trace(std::move(trace)) {}
  cuda::Violation violation;
  std::string phase;
  nlohmann::json trace;  // the call's recorded trace (audit.hpp)
};

/// A CUDA error raised by a call of the candidate (crash) or of the reference (infra error).
struct CallFault : std::runtime_error {
  CallFault(bool candidate, std::string phase, const std::string& what)
      : std::runtime_error(what), candidate(candidate), phase(std::move(phase)) {}
  bool candidate;
  std::string phase;
};

class Session {
 public:
  /// Selects the device, creates the context and the launch stream, zeroes the persisting
  /// L2 limit, loads both kernels. Throws CudaFault / std::runtime_error (infra errors) or
  /// LoadError for a candidate that cannot be loaded.
  Session(const Job& job, const CudaPlan& plan);
  ~Session();

  /// Runs one call inside a CUPTI window. Candidate calls are audited (throws Rejected) and
  /// CUDA errors become CallFault.
  cuda::ActivitySample call(bool candidate, DeviceTensors& in, DeviceTensors& out, const std::string& phase);
  /// The same call timed by CUDA events on the launch stream, tracing paused (cross-check).
  double event_ns(bool candidate, DeviceTensors& in, DeviceTensors& out);

  cudaStream_t stream() const { return stream_; }
  /// Fills, poisoning and comparisons on the GPU (their kernels are not the candidate's).
  GpuChecks& checks() { return *checks_; }
  const CudaPlan& plan() const { return plan_; }
  nlohmann::json device_json() const { return device_; }
  void pause_tracing() {
    if (timer_) timer_->pause();
  }
  const std::set<std::string>& candidate_kernels() const { return candidate_kernels_; }
  /// The last audited candidate call's trace, with the launch stream's CUPTI id.
  const nlohmann::json& last_trace() const { return last_trace_; }

 private:
  CudaPlan plan_;
  cudaStream_t stream_ = nullptr;
  std::optional<cuda::ActivityTimer> timer_;  // absent in the profile protocol
  std::optional<GpuChecks> checks_;
  CudaKernelFn reference_ = nullptr, candidate_ = nullptr;
  std::optional<cuda::CandidateAudit> audit_;
  std::set<std::string> candidate_kernels_;
  nlohmann::json last_trace_;
  uint32_t launch_stream_id_ = 0;
  nlohmann::json device_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

/// A kernel that could not be loaded (missing symbol, bad object); the candidate's is a
/// compile_error, the reference's an infra_error.
struct LoadError : std::runtime_error {
  LoadError(bool candidate, const std::string& what) : std::runtime_error(what), candidate(candidate) {}
  bool candidate;
};

}  // namespace kmcts::worker
