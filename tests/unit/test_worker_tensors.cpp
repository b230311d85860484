// The workers' comparison rule (compare_rule.hpp) and input fills (distributions.hpp), shared
// by the host and the CUDA worker's GPU kernels.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "hardware/worker/tensors.hpp"

using namespace kmcts::worker;

TEST_CASE("worker tensors: the elementwise rule (NaN and Inf parity, atol + rtol |expected|)") {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  CHECK(element_matches(1.0, 1.0 + 1e-5, 1e-5, 1e-5));
  CHECK_FALSE(element_matches(1.0, 1.0 + 3e-5, 1e-5, 1e-5));
  CHECK(element_matches(nan, nan, 1, 1));
  CHECK_FALSE(element_matches(nan, 0.0, 1, 1));
  CHECK_FALSE(element_matches(0.0, nan, 1, 1));
  CHECK(element_matches(inf, inf, 0, 0));
  CHECK_FALSE(element_matches(inf, -inf, 1, 1));
  CHECK_FALSE(element_matches(5.0, inf, 1e9, 1e9));
}

TEST_CASE("worker tensors: summaries of disjoint ranges merge, in any order, into the whole output's") {
  // The CUDA worker reduces per GPU block and merges on the host; the result must not depend
  // on how the output was cut or in which order the pieces arrive.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> x = {1, -2, 3, 0, 5, 6, 7, -8, 9, 10, 3, 2};
  std::vector<double> y = {1, -2.5, 3, 0, 5.5, 6, 7, -8, 9, 10.5, 3, nan};
  std::vector<bool> poison(x.size(), false);
  poison[11] = true;
  OutputSummary whole;
  for (size_t i = 0; i < x.size(); ++i) whole.add(static_cast<int64_t>(i), x[i], y[i], poison[i], 0.1, 0.01);
  CHECK(whole.first_bad == 1);
  CHECK(whole.worst == 1);  // |-0.5| ties with elements 4 and 9: the lowest index wins
  CHECK(whole.unwritten == 1);
  CHECK(whole.scale == 10);
  for (size_t cut : {1u, 3u, 5u, 11u}) {
    OutputSummary left, right;
    for (size_t i = 0; i < x.size(); ++i)
      (i < cut ? left : right).add(static_cast<int64_t>(i), x[i], y[i], poison[i], 0.1, 0.01);
    for (bool swap : {false, true}) {
      OutputSummary merged = swap ? right : left;
      merged.merge(swap ? left : right);
      CAPTURE(cut);
      CHECK(merged.first_bad == whole.first_bad);
      CHECK(merged.worst == whole.worst);
      CHECK(merged.unwritten == whole.unwritten);
      CHECK(merged.max_abs == whole.max_abs);
      CHECK(merged.max_rel == whole.max_rel);
      CHECK(merged.scale == whole.scale);
    }
  }
}

TEST_CASE("worker tensors: the scale rule reports the worst element when every element passes alone") {
  OutputSummary s;
  for (int i = 0; i < 4; ++i) s.add(i, 1e-7 * (i + 1), 0.0, false, 1e-5, 1e-5);  // all within atol
  CHECK(s.first_bad == -1);
  CHECK(s.failing_index(1e-5, 1e-5) == 3);  // max |err| 4e-7 > 1e-5 x 4e-7
  TensorDesc y;
  y.name = "Y", y.dtype = KMCTS_F32, y.shape = {2, 2}, y.numel = 4;
  auto m = output_mismatch(y, s, 4e-7, 0.0, false, 1e-5, 1e-5);
  REQUIRE(m);
  CHECK(m->details["rule"] == "scale");
  CHECK(m->details["first_bad_coords"] == nlohmann::json::array({1, 1}));
}

TEST_CASE("worker tensors: any element of a fill can be drawn alone (as GPU threads do)") {
  TensorDesc x;
  x.name = "X", x.dtype = KMCTS_F64, x.shape = {3 * kFillBlock + 17}, x.numel = 3 * kFillBlock + 17;
  for (const char* d : {"uniform", "normal", "negative", "heavy_tailed"}) {
    x.distributions = {d};
    TensorSet set({x});
    fill_inputs(set, {x}, 42, kTimingStream, 1);
    const auto* v = reinterpret_cast<const double*>(set.data(0));
    const uint64_t key = fill_key(kTimingStream, 1, 0);
    for (int64_t k : {int64_t{0}, int64_t{1}, kFillBlock - 1, kFillBlock, 2 * kFillBlock + 5, x.numel - 1}) {
      CAPTURE(d);
      CAPTURE(k);
      CHECK(fill_value(*parse_distribution(d), 42, key, k) == v[k]);
    }
  }
}
