#pragma once
// When a worker stops timing (REFERENCE.md, measurement protocol), shared by the cpu and
// CUDA workers so both evaluators stop on the same rule:
//   every kernel has >= max(min_samples, input sets) samples and >= min_time_ms of kernel
//   time, and the relative standard error of both medians is <= rse_target; or either
//   kernel has max_samples samples; or the loop has run max_time_ms of wall time.
#include <cstddef>
#include <string>
#include <vector>

#include "hardware/worker/job.hpp"

namespace kmcts::worker {

struct StopInputs {
  const std::vector<double>* reference_ns;
  const std::vector<double>* candidate_ns;
  double reference_ms = 0;  // kernel time sampled so far
  double candidate_ms = 0;
  size_t input_sets = 1;
  double elapsed_ms = 0;    // wall time of the timing loop so far
  double min_time_ms = 0;   // the plan's, or more (the CUDA worker asks more of short kernels)
};

/// "rse_target", "max_samples", "max_time", or "" to keep sampling.
std::string stop_reason(const StopInputs& in, const TimingPlan& plan);

}  // namespace kmcts::worker
