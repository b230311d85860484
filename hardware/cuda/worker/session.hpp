#pragma once
// One CUDA worker run: the device, the worker's own stream, the GPU checks, and one kernel
// host per kernel (kernel_host.hpp): the reference's and the candidate's code runs in those
// processes, never in this one. Calls go through here so each is spanned by this process's
// clocks (wall, and a CUDA event pair on its stream), checked for CUDA errors and, for the
// candidate, audited against the ABI's rules and held to the timing bound (hardware/worker/timing_bound.hpp).
#include "hardware/cuda/worker/runtime.hpp"

#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "hardware/cuda/audit.hpp"
#include "hardware/cuda/cupti/activity_timer.hpp"
#include "hardware/worker/timing_bound.hpp"
#include "hardware/cuda/worker/device.hpp"
#include "hardware/cuda/worker/gpu_checks.hpp"
#include "hardware/cuda/worker/kernel_host.hpp"
#include "hardware/worker/job.hpp"

namespace kmcts::worker {

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

/// The candidate broke an ABI rule (audit.hpp) or the timing bound; reported as "rejected".
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

/// A kernel that could not be loaded (missing symbol, bad object); the candidate's is a
/// compile_error, the reference's an infra_error.
struct LoadError : std::runtime_error {
  LoadError(bool candidate, const std::string& what) : std::runtime_error(what), candidate(candidate) {}
  bool candidate;
};

class Session {
 public:
  /// Selects the device, creates this process's context and stream, zeroes the persisting L2
  /// limit, starts the kernel hosts (the reference's only where the protocol calls it) and
  /// waits for both kernels to load. Throws CudaFault / std::runtime_error / HostFailure
  /// (infra errors, or the candidate's host failing), or LoadError.
  Session(const Job& job, const CudaPlan& plan);
  ~Session();

  /// Runs one call in its kernel's host inside a CUPTI window, spanned here. Candidate calls
  /// are audited and their reports checked against the spans (throw Rejected); CUDA errors
  /// become CallFault; a host that dies or breaks the protocol, HostFailure. Calls of phase
  /// "timing" count toward the timing bound.
  cuda::ActivitySample call(bool candidate, DeviceTensors& in, DeviceTensors& out, const std::string& phase);
  /// The same call timed by CUDA events on the host's launch stream, tracing paused (cross-check).
  double event_ns(bool candidate, DeviceTensors& in, DeviceTensors& out);
  /// The timing bound over the timed calls so far (hardware/worker/timing_bound.hpp); throws Rejected.
  void check_timing_bound();
  nlohmann::json timing_bound_json() const { return bound_record_; }

  /// This process's stream: the L2 flush, and the event pairs that span each call.
  cudaStream_t stream() const { return stream_; }
  /// Fills, poisoning and comparisons on the GPU (their kernels are not the candidate's).
  GpuChecks& checks() { return *checks_; }
  const CudaPlan& plan() const { return plan_; }
  nlohmann::json device_json() const { return device_; }
  void pause_tracing();
  const std::set<std::string>& candidate_kernels() const { return candidate_kernels_; }
  /// The last audited candidate call's trace, with the launch stream's CUPTI id.
  const nlohmann::json& last_trace() const { return last_trace_; }
  /// HIP only (empty on CUDA, where CUPTI times each call as it runs): every call's window as
  /// this process spans it, in call order, on its monotonic and its boot clock, nanoseconds:
  /// [{"candidate": B, "phase": P, "mono": [T0, T1], "boot": [T0, T1]}]. rocprofv3's trace of
  /// the hosts is read against them after the run (hardware/hip/rocprof_trace.hpp): the
  /// calls of phase "timing" of each side are its samples, in order.
  const nlohmann::json& windows() const { return windows_; }
  /// The hosts' process ids (rocprofv3 writes a trace per process): {"reference": P, "candidate": P}.
  nlohmann::json host_pids() const;
  /// Ends both hosts in order, each within `timeout_s`: how each ended. HIP: before the
  /// verdict, so that each host's trace is written (a killed host leaves none).
  nlohmann::json finish_hosts(double timeout_s);

 private:
  KernelHost& host(bool candidate, const std::string& phase);
  nlohmann::json ask(bool candidate, const nlohmann::json& request, const std::string& phase);

  CudaPlan plan_;
  bool tracing_ = true;  // off in the profile protocol: a profiler owns CUPTI
  cudaStream_t stream_ = nullptr;
  std::optional<GpuChecks> checks_;
  std::unique_ptr<KernelHost> reference_, candidate_;
  std::optional<cuda::CandidateAudit> audit_;
  std::set<std::string> candidate_kernels_;
  nlohmann::json last_trace_;
  nlohmann::json windows_ = nlohmann::json::array();
  nlohmann::json device_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  TimingBoundPolicy policy_;
  SpanTotals timed_[2];  // [candidate]
  nlohmann::json bound_record_ = nlohmann::json::object();
};

}  // namespace kmcts::worker
