#pragma once
// Times the reference and the candidate in alternating blocks, so slow drift (frequency,
// thermals, neighbours) moves both medians alike and cancels in the ratio. Each kernel runs in
// its own host (cpu_host.hpp); this process prepares every call (poison, cache flush) and holds
// the hosts' reports to the timing bound.
#include <vector>

#include <nlohmann/json.hpp>

#include "hardware/cpu/worker/cpu_host.hpp"
#include "hardware/worker/job.hpp"
#include "hardware/worker/tensors.hpp"
#include "kmcts_cpu.h"

namespace kmcts::worker {

/// One rotated input set, a copy per kernel in its host's arena, with each kernel's own
/// outputs. After timing, each output set holds what that kernel wrote in its last timed call
/// on these inputs (outputs are poisoned before every timed call, so a skipped call leaves
/// NaN for the re-check).
struct TimingSet {
  TimingSet(const Job& job, SharedArena& reference, SharedArena& candidate)
      : reference_in(job.inputs, &reference),
        reference_out(job.outputs, &reference),
        candidate_in(job.inputs, &candidate),
        candidate_out(job.outputs, &candidate) {}
  TensorSet reference_in;
  TensorSet reference_out;
  TensorSet candidate_in;
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
/// time (flushes and poisoning included, so the budget bounds the real cost). After every
/// block the candidate's reports are held to the timing bound (throws BoundRejected).
TimingOutcome time_interleaved(CpuHost& reference, CpuHost& candidate, std::vector<TimingSet>& sets,
                               const TimingPlan& plan);

}  // namespace kmcts::worker
