// The stopping rule both workers share (REFERENCE.md), on recorded-style sample sets.
#include <doctest/doctest.h>

#include <vector>

#include "hardware/worker/stop_rule.hpp"

using namespace kmcts::worker;

namespace {

std::vector<double> steady(size_t n, double ns, double wobble) {
  std::vector<double> v;
  for (size_t i = 0; i < n; ++i) v.push_back(ns * (1 + wobble * static_cast<double>(static_cast<int>(i % 7) - 3)));
  return v;
}

}  // namespace

TEST_CASE("stop rule: stable medians stop only after the sample and time floors") {
  TimingPlan plan;  // rse 0.5%, >= 20 samples, >= 50 ms, <= 2000 samples, <= 2 s
  auto ref = steady(40, 65000, 0.001), cand = steady(40, 50000, 0.001);
  // 40 samples of 65 us is 2.6 ms of GPU time: under the 50 ms floor, keep going.
  CHECK(stop_reason({&ref, &cand, 2.6, 2.0, 2, 100, 50}, plan).empty());
  // Enough GPU time (as if each sample were long) and a tight median: stop.
  CHECK(stop_reason({&ref, &cand, 60, 60, 2, 100, 50}, plan) == "rse_target");
  // Fewer samples than the floor, even with the time: keep going.
  auto few_ref = steady(10, 65000, 0.001), few_cand = steady(10, 50000, 0.001);
  CHECK(stop_reason({&few_ref, &few_cand, 60, 60, 2, 100, 50}, plan).empty());
}

TEST_CASE("stop rule: noisy medians run to the sample cap or the time budget") {
  TimingPlan plan;
  plan.max_samples = 100;
  auto noisy_ref = steady(100, 65000, 0.2), noisy_cand = steady(100, 50000, 0.2);
  CHECK(stop_reason({&noisy_ref, &noisy_cand, 60, 60, 2, 100, 50}, plan) == "max_samples");
  auto some_ref = steady(60, 65000, 0.2), some_cand = steady(60, 50000, 0.2);
  CHECK(stop_reason({&some_ref, &some_cand, 60, 60, 2, 100, 50}, plan).empty());
  CHECK(stop_reason({&some_ref, &some_cand, 60, 60, 2, 2500, 50}, plan) == "max_time");
  // The time budget never stops a run before every input set has a sample.
  auto one_ref = steady(1, 65000, 0), one_cand = steady(1, 50000, 0);
  CHECK(stop_reason({&one_ref, &one_cand, 1, 1, 2, 2500, 50}, plan).empty());
}
