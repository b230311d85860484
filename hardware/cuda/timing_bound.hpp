#pragma once
// The timing bound of the CUDA worker (rule timing_bound, issue 28 item 4). The candidate's
// calls run in a process of its own (kmcts-cuda-host), which times them with CUPTI and reports
// each call's window (launch to synchronised, on its CPU clock) and GPU union. Code that takes
// that process over can report what it likes, so the trusted worker spans every call itself
// (wall clock between its request and the reply, and a CUDA event pair on its own stream) and
// holds the reports against what the reference, timed through the same kind of process and
// the same messages, leaves unreported. CUDA-free: unit-tested in CI on made-up figures.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "hardware/cuda/audit.hpp"

namespace kmcts::cuda {

/// One call as the trusted side saw it and as the host reported it, in ms.
struct CallSpan {
  double wall_ms = 0;    // request sent to reply read, trusted clock
  double gpu_ms = -1;    // the trusted event pair around the same (-1 = none)
  double window_ms = 0;  // reported: the call's CPU window
  double union_ms = 0;   // reported: GPU time (what is scored)
};

/// Sums over the timed calls of one side.
struct SpanTotals {
  double wall_ms = 0, gpu_ms = 0, window_ms = 0, union_ms = 0;
  int calls = 0;
  void add(const CallSpan& c);
  /// Time outside the reported windows (messages, wake-ups), and inside them but off the GPU
  /// union (launch, synchronisation, host work in the call), per call.
  double outside_per_call() const { return calls ? (wall_ms - window_ms) / calls : 0; }
  double gap_per_call() const { return calls ? (window_ms - union_ms) / calls : 0; }
};

/// The margins, from A/A runs on the H200 (bench/results/confinement.md, run H): there the
/// reference's host left ~0.4 ms per call outside its windows and ~0.55 ms inside them off the
/// GPU (CUPTI's launch cost), and an identical candidate's host up to 26 us more per call.
/// So a report shaved by less than about a quarter of those overheads passes unseen.
struct TimingBoundPolicy {
  double factor = 1.25;             // the reference's per-call overheads, times this
  double slack_per_call_ms = 0.05;  // plus this per candidate call
  double floor_ms = 20.0;           // plus this in all (scheduling hiccups)
  double span_slack_ms = 0.05;      // one call's report may exceed the trusted spans by this
};

/// A single call's report against the trusted spans of it: the union inside the window, the
/// window inside the wall span, the union inside the GPU span. nullopt when consistent.
std::optional<Violation> check_call(const CallSpan& c, const TimingBoundPolicy& p);

/// Over all timed calls so far: what the candidate leaves unreported, outside its windows and
/// inside them off the GPU, may not exceed what the reference leaves per call, times factor, plus
/// slack per call and the floor. `record` gets the figures of both checks.
std::optional<Violation> check_totals(const SpanTotals& reference, const SpanTotals& candidate,
                                      const TimingBoundPolicy& p, nlohmann::json* record = nullptr);

}  // namespace kmcts::cuda
