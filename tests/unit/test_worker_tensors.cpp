// The workers' host-side comparison rules: the elementwise rule shared by full comparisons and
// the CUDA worker's spot checks of timed calls.
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

TEST_CASE("worker tensors: a spot check compares a span of an output and names the first bad element") {
  TensorDesc y;
  y.name = "Y", y.dtype = KMCTS_F32, y.shape = {8}, y.numel = 8;
  TensorSet expected({y});
  float* e = reinterpret_cast<float*>(expected.data(0));
  for (int i = 0; i < 8; ++i) e[i] = static_cast<float>(i);
  std::vector<float> got = {4, 5, 6};  // elements 4..6
  CHECK_FALSE(compare_span(expected, 0, 4, 3, got.data(), y, 1e-6, 1e-6).has_value());
  got[1] = 5.5f;
  auto m = compare_span(expected, 0, 4, 3, got.data(), y, 1e-6, 1e-6);
  REQUIRE(m);
  CHECK(m->details["first_bad_index"] == 5);
  CHECK(m->details["rule"] == "allclose");
  got[1] = std::numeric_limits<float>::quiet_NaN();  // never written: the poison left
  m = compare_span(expected, 0, 4, 3, got.data(), y, 1e-6, 1e-6);
  REQUIRE(m);
  CHECK(m->details["rule"] == "unwritten");
  CHECK(m->message.find("not written") != std::string::npos);
}
