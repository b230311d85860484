// GPU timing arithmetic on recorded numbers (no GPU needed): interval union, bootstrap.
#include <doctest/doctest.h>

#include "hardware/cuda/timing_math.hpp"

using namespace kmcts::cuda;

TEST_CASE("cuda timing: union of activity intervals, clipped to the sample's window") {
  CHECK(union_ns({}, 0, 100) == 0);
  CHECK(union_ns({{10, 20}}, 0, 100) == 10);
  // Two streams overlapping (a kernel on a side stream during the main one) count once.
  CHECK(union_ns({{10, 50}, {30, 70}}, 0, 100) == 60);
  // Nested, touching and disjoint intervals, given out of order.
  CHECK(union_ns({{60, 80}, {10, 20}, {12, 15}, {20, 30}, {90, 95}}, 0, 100) == 20 + 20 + 5);
  // Work outside the window (an earlier sample's tail, a later launch) is clipped away.
  CHECK(union_ns({{0, 15}, {95, 200}, {40, 41}}, 10, 100) == 5 + 1 + 5);
  CHECK(union_ns({{50, 40}}, 0, 100) == 0);  // empty interval
}

TEST_CASE("cuda timing: bootstrap interval of the speedup covers the truth and is repeatable") {
  std::vector<double> ref, cand;
  for (int i = 0; i < 41; ++i) {  // medians 200 and 100: speedup 2, a few percent of spread
    ref.push_back(200 + (i % 7) - 3.0);
    cand.push_back(100 + (i % 5) - 2.0);
  }
  RatioInterval r = bootstrap_speedup(ref, cand, 1);
  CHECK(r.estimate == doctest::Approx(2.0));
  CHECK(r.low <= 2.0);
  CHECK(r.high >= 2.0);
  CHECK(r.high - r.low < 0.1);
  RatioInterval again = bootstrap_speedup(ref, cand, 1);
  CHECK(again.low == r.low);
  CHECK(again.high == r.high);
  // Identical sample sets: an interval around 1.
  RatioInterval same = bootstrap_speedup(ref, ref, 2);
  CHECK(same.estimate == doctest::Approx(1.0));
  CHECK(same.low <= 1.0);
  CHECK(same.high >= 1.0);
  CHECK_THROWS(bootstrap_speedup({}, cand, 1));
}
