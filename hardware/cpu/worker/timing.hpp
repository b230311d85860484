#pragma once
// Times the reference and the candidate in one process, in alternating blocks, so slow
// drift (frequency, thermals, neighbours) moves both medians alike and cancels in the ratio.
#include <vector>

#include <nlohmann/json.hpp>

#include "hardware/worker/job.hpp"
#include "hardware/worker/tensors.hpp"
#include "kmcts_cpu.h"

namespace kmcts::worker {

using KernelFn = void (*)(const kmcts_tensor*, int32_t, kmcts_tensor*, int32_t);

/// One rotated input set with each kernel's own outputs. After timing, each output set
/// holds what that kernel wrote in its last timed call on these inputs (outputs are
/// poisoned before every timed call, so a skipped call leaves NaN for the re-check).
struct TimingSet {
  explicit TimingSet(const Job& job) : inputs(job.inputs), reference_out(job.outputs), candidate_out(job.outputs) {}
  TensorSet inputs;
  TensorSet reference_out;
  TensorSet candidate_out;
};

struct TimingOutcome {
  std::vector<double> reference_ns;
  std::vector<double> candidate_ns;
  nlohmann::json counters = nlohmann::json::object();
};

/// Warm-up, then interleaved timed samples until the stopping rule of `plan` holds:
///   every kernel has >= max(min_samples, sets) samples and >= min_time_ms of kernel time,
///   and the relative standard error of both medians is <= rse_target;
/// or either kernel has max_samples samples; or the loop has run max_time_ms of wall
/// time (flushes and poisoning included, so the budget bounds the real cost).
TimingOutcome time_interleaved(KernelFn reference, KernelFn candidate, std::vector<TimingSet>& sets,
                               const TimingPlan& plan);

}  // namespace kmcts::worker
