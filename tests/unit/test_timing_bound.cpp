// The workers' timing bound on made-up spans (no GPU needed): what the trusted worker holds a
// kernel host's reports against (hardware/worker/timing_bound.hpp).
#include <doctest/doctest.h>

#include "hardware/worker/timing_bound.hpp"

using namespace kmcts::worker;

namespace {

/// `calls` calls of a side whose honest call takes `kernel_ms` on the GPU, `gap_ms` more in its
/// window (launch, synchronisation) and `outside_ms` more outside it (messages), reported
/// with the window divided by `window_div` and the union by `union_div`.
SpanTotals side(int calls, double kernel_ms, double gap_ms, double outside_ms, double window_div = 1,
                double union_div = 1) {
  SpanTotals t;
  for (int i = 0; i < calls; ++i) {
    const double window = kernel_ms + gap_ms, wall = window + outside_ms;
    t.add({wall, wall, window / window_div, kernel_ms / union_div});
  }
  return t;
}

}  // namespace

TEST_CASE("timing bound: honest reports pass, whatever the kernels' speeds") {
  const TimingBoundPolicy p;
  const SpanTotals reference = side(400, 0.5, 0.012, 0.06);
  nlohmann::json record;
  for (double kernel_ms : {0.002, 0.05, 0.5, 20.0}) {
    CHECK_FALSE(check_totals(reference, side(400, kernel_ms, 0.012, 0.06), p, &record));
    // An honest candidate's overheads may be somewhat above the reference's (noise, more launches).
    CHECK_FALSE(check_totals(reference, side(400, kernel_ms, 0.016, 0.08), p));
  }
  CHECK(record["allowed_outside_ms"].get<double>() > record["unreported_outside_ms"].get<double>());
  CHECK(record.contains("reference_gap_per_call_ms"));
  // Nothing is decided before both sides have timed calls.
  CHECK_FALSE(check_totals(SpanTotals{}, side(10, 5, 0, 50, 8, 8), p));
}

TEST_CASE("timing bound: windows reported too short are rejected (the outside check)") {
  const TimingBoundPolicy p;
  const SpanTotals reference = side(400, 0.5, 0.012, 0.06);
  // Window and union both divided by 8 (forge_timing.cu): the time they hide reappears
  // outside the windows on the trusted wall clock.
  auto v = check_totals(reference, side(400, 0.5, 0.012, 0.06, 8, 8), p);
  REQUIRE(v);
    CHECK(v->find("too short") != std::string::npos);
  // A forgery too small for the margins is not seen: the bound limits, it does not measure.
  CHECK_FALSE(check_totals(reference, side(400, 0.5, 0.012, 0.06, 1.05, 1.05), p));
}

TEST_CASE("timing bound: a GPU union shrunk inside honest windows is rejected (the gap check)") {
  const TimingBoundPolicy p;
  const SpanTotals reference = side(400, 0.5, 0.012, 0.06);
  auto v = check_totals(reference, side(400, 0.5, 0.012, 0.06, 1, 8), p);  // forge_union.cu
  REQUIRE(v);
    CHECK(v->find("off the GPU") != std::string::npos);
  // Few calls stay under the floor: the bound is for what adds up.
  CHECK_FALSE(check_totals(reference, side(10, 0.5, 0.012, 0.06, 1, 8), p));
}

TEST_CASE("timing bound: one call's report must lie inside the trusted spans of it") {
  const TimingBoundPolicy p;
  CHECK_FALSE(check_call({1.0, 0.98, 0.9, 0.8}, p));
  CHECK_FALSE(check_call({1.0, -1, 0.9, 0.8}, p));  // no event pair: the GPU check is skipped
  auto v = check_call({1.0, 0.98, 0.9, 0.97}, p);  // more GPU time than its own window
  REQUIRE(v);
  CHECK(v->find("call window") != std::string::npos);
  v = check_call({1.0, 0.98, 1.2, 0.5}, p);  // a window longer than the call
  REQUIRE(v);
  CHECK(v->find("wall time") != std::string::npos);
  v = check_call({1.0, 0.3, 0.9, 0.8}, p);  // more GPU time than the GPU's clock saw pass
  REQUIRE(v);
  CHECK(v->find("GPU clock") != std::string::npos);
  CHECK(check_call({1.0, 1.0, -0.5, -1}, p));
}
