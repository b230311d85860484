#pragma once
// The timing bound of both workers (rule timing_bound, issue 28 item 4). Each kernel runs in a
// process of its own (kmcts-cuda-host, kmcts-cpu-host), which times its calls and reports each
// call's window (its clock, around the call) and the time scored (the GPU union of CUPTI's
// records; on the CPU the window itself). Code that takes that process over can report what it
// likes, so the trusted worker spans every call itself (wall clock between its request and the
// reply; on a GPU a CUDA event pair on its own stream too) and holds the reports against what
// the reference, timed through the same kind of process and the same messages, leaves
// unreported. Unit-tested in CI on made-up figures.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>


namespace kmcts::worker {

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

/// The margins. The defaults are the GPU's, from A/A runs on the H200 (bench/results/
/// confinement.md, run H): there the reference's host left ~0.45 ms per call outside its
/// windows and ~0.7 ms inside them off the GPU (CUPTI's launch cost), and an identical
/// candidate's host up to 0.18 ms more per call. So a report shaved by less than about a
/// quarter of those overheads passes unseen.
struct TimingBoundPolicy {
  double factor = 1.25;             // the reference's per-call overheads, times this
  double slack_per_call_ms = 0.05;  // plus this per candidate call
  double floor_ms = 20.0;           // plus this in all (scheduling hiccups)
  double span_slack_ms = 0.05;      // one call's report may exceed the trusted spans by this
  /// The CPU's: its calls are timed by a process scheduled among others, on a machine that
  /// may run more workers than cores.
  static TimingBoundPolicy cpu() { return {1.5, 0.5, 100.0, 0.05}; }
};

/// A report that breaks the bound: the rule's message (the rule is "timing_bound").
using BoundBreach = std::optional<std::string>;

/// A single call's report against the trusted spans of it: the union inside the window, the
/// window inside the wall span, the union inside the GPU span. nullopt when consistent.
BoundBreach check_call(const CallSpan& c, const TimingBoundPolicy& p);

/// Over all timed calls so far: what the candidate leaves unreported, outside its windows and
/// inside them off the GPU, may not exceed what the reference leaves per call, times factor, plus
/// slack per call and the floor. `record` gets the figures of both checks.
BoundBreach check_totals(const SpanTotals& reference, const SpanTotals& candidate,
                                      const TimingBoundPolicy& p, nlohmann::json* record = nullptr);

}  // namespace kmcts::worker
