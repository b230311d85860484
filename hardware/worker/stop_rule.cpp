#include "hardware/worker/stop_rule.hpp"

#include <algorithm>

#include "core/eval_result.hpp"

namespace kmcts::worker {

std::string stop_reason(const StopInputs& in, const TimingPlan& plan) {
  const size_t n = std::min(in.reference_ns->size(), in.candidate_ns->size());
  const size_t min_samples = std::max(static_cast<size_t>(plan.min_samples), in.input_sets);
  if (n >= min_samples && in.reference_ms >= in.min_time_ms && in.candidate_ms >= in.min_time_ms &&
      TimingStats::from_samples(*in.reference_ns).rse_median <= plan.rse_target &&
      TimingStats::from_samples(*in.candidate_ns).rse_median <= plan.rse_target)
    return "rse_target";
  if (n >= static_cast<size_t>(plan.max_samples)) return "max_samples";
  if (n >= in.input_sets && in.elapsed_ms >= plan.max_time_ms) return "max_time";
  return {};
}

}  // namespace kmcts::worker
