#include "hardware/worker/timing_bound.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace kmcts::worker {

void SpanTotals::add(const CallSpan& c) {
  wall_ms += c.wall_ms;
  gpu_ms += std::max(0.0, c.gpu_ms);
  window_ms += c.window_ms;
  union_ms += c.union_ms;
  ++calls;
}

BoundBreach check_call(const CallSpan& c, const TimingBoundPolicy& p) {
  auto broken = [](const std::string& what) { return BoundBreach("the candidate's process reported " + what); };
  if (c.union_ms < 0 || c.window_ms < 0) return broken("a negative time");
  if (c.union_ms > c.window_ms + p.span_slack_ms)
    return broken(fmt::format("{:.4f} ms of GPU time in a call window of {:.4f} ms", c.union_ms, c.window_ms));
  if (c.window_ms > c.wall_ms + p.span_slack_ms)
    return broken(fmt::format("a call window of {:.4f} ms for a call that took {:.4f} ms of the trusted side's wall "
                              "time", c.window_ms, c.wall_ms));
  if (c.gpu_ms >= 0 && c.union_ms > c.gpu_ms + p.span_slack_ms)
    return broken(fmt::format("{:.4f} ms of GPU time for a call that took {:.4f} ms of the trusted side's GPU clock",
                              c.union_ms, c.gpu_ms));
  return std::nullopt;
}

BoundBreach check_totals(const SpanTotals& reference, const SpanTotals& candidate,
                                      const TimingBoundPolicy& p, nlohmann::json* record) {
  if (reference.calls == 0 || candidate.calls == 0) return std::nullopt;
  const double base = p.floor_ms;
  const double outside = candidate.wall_ms - candidate.window_ms;
  const double gap = candidate.window_ms - candidate.union_ms;
  const double allowed_outside =
      base + candidate.calls * (p.factor * std::max(0.0, reference.outside_per_call()) + p.slack_per_call_ms);
  const double allowed_gap =
      base + candidate.calls * (p.factor * std::max(0.0, reference.gap_per_call()) + p.slack_per_call_ms);
  if (record)
    *record = {{"candidate_calls", candidate.calls},
               {"reference_calls", reference.calls},
               {"candidate_wall_ms", candidate.wall_ms},
               {"candidate_gpu_span_ms", candidate.gpu_ms},
               {"candidate_windows_ms", candidate.window_ms},
               {"candidate_union_ms", candidate.union_ms},
               {"reference_outside_per_call_ms", reference.outside_per_call()},
               {"reference_gap_per_call_ms", reference.gap_per_call()},
               {"candidate_outside_per_call_ms", candidate.outside_per_call()},
               {"candidate_gap_per_call_ms", candidate.gap_per_call()},
               {"unreported_outside_ms", outside},
               {"allowed_outside_ms", allowed_outside},
               {"unreported_gap_ms", gap},
               {"allowed_gap_ms", allowed_gap},
               {"factor", p.factor},
               {"slack_per_call_ms", p.slack_per_call_ms},
               {"floor_ms", p.floor_ms}};
  if (outside > allowed_outside)
    return fmt::format("the candidate's process reported {:.3f} ms of call windows for {} calls that took "
                                 "{:.3f} ms of the trusted side's wall time: {:.3f} ms unreported, more than the {:.3f} "
                                 "ms the reference's overheads allow (its reported times are too short)",
                                 candidate.window_ms, candidate.calls, candidate.wall_ms, outside, allowed_outside);
  if (gap > allowed_gap)
    return fmt::format("the candidate's process reported {:.3f} ms of GPU time inside {:.3f} ms of call "
                                 "windows over {} calls: {:.3f} ms off the GPU, more than the {:.3f} ms the "
                                 "reference's launches allow (its reported GPU times are too short, or the call "
                                 "does host work: allocations, synchronisations)",
                                 candidate.union_ms, candidate.window_ms, candidate.calls, gap, allowed_gap);
  return std::nullopt;
}

}  // namespace kmcts::worker
