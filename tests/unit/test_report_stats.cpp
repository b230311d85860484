// The statistics of `kmcts report`: bootstrap intervals and best-so-far curves, checked against
// values computed independently (by hand, or by enumerating every possible resample).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "reports/bootstrap.hpp"
#include "reports/run_curve.hpp"

using namespace kmcts;

namespace {

// The exact bootstrap distribution of a statistic: all n^n equally likely ordered resamples
// of n items (resample i draws item (i / n^k) % n at position k), each mapped to its statistic.
std::vector<double> exact_bootstrap(size_t n, const std::function<double(const std::vector<size_t>&)>& stat) {
  size_t total = 1;
  for (size_t k = 0; k < n; ++k) total *= n;
  std::vector<double> out;
  std::vector<size_t> pick(n);
  for (size_t i = 0; i < total; ++i) {
    size_t rest = i;
    for (size_t k = 0; k < n; ++k, rest /= n) pick[k] = rest % n;
    out.push_back(stat(pick));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The Monte Carlo percentile x of probability p is right when the exact distribution puts
// about p below it: P(X < x) <= p + tol and P(X <= x) >= p - tol. 10,000 resamples put the
// empirical quantile's probability within about 0.0016 (one sd) of p; tol = 0.01 is 6 sd.
void check_percentile(const std::vector<double>& exact, double x, double p) {
  const double total = static_cast<double>(exact.size());
  const double below = static_cast<double>(std::lower_bound(exact.begin(), exact.end(), x - 1e-12) - exact.begin()) / total;
  const double at_or_below = static_cast<double>(std::upper_bound(exact.begin(), exact.end(), x + 1e-12) - exact.begin()) / total;
  CHECK(below <= p + 0.01);
  CHECK(at_or_below >= p - 0.01);
}

double mean_of(const std::vector<double>& x, const std::vector<size_t>& pick) {
  double sum = 0;
  for (size_t i : pick) sum += x[i];
  return sum / static_cast<double>(pick.size());
}

}  // namespace

TEST_CASE("report stats: mean, median and the type-7 quantile by hand") {
  CHECK(statistic(Statistic::mean, {1, 2, 4, 8}) == doctest::Approx(3.75));
  CHECK(statistic(Statistic::median, {8, 1, 4}) == 4);
  CHECK(statistic(Statistic::median, {8, 1, 4, 2}) == 3);  // (2 + 4) / 2
  const double inf = INFINITY;
  CHECK(statistic(Statistic::median, {2, inf, 4}) == 4);    // one censored of three: still finite
  CHECK(std::isinf(statistic(Statistic::median, {2, inf, inf})));
  CHECK(std::isnan(statistic(Statistic::mean, {})));
  // R: quantile(c(1, 2, 3, 4), c(0.25, 0.5, 0.975)) = 1.75, 2.5, 3.925
  CHECK(quantile_sorted({1, 2, 3, 4}, 0.25) == doctest::Approx(1.75));
  CHECK(quantile_sorted({1, 2, 3, 4}, 0.5) == doctest::Approx(2.5));
  CHECK(quantile_sorted({1, 2, 3, 4}, 0.975) == doctest::Approx(3.925));
}

TEST_CASE("report stats: degenerate samples give degenerate intervals") {
  const Estimate one = bootstrap({7.5}, Statistic::mean);
  CHECK(one.n == 1);
  CHECK(one.ci.lo == 7.5);
  CHECK(one.ci.hi == 7.5);
  const Estimate same = bootstrap({5, 5, 5}, Statistic::median);
  CHECK(same.ci.lo == 5);
  CHECK(same.ci.hi == 5);
  const Estimate none = bootstrap({}, Statistic::mean);
  CHECK(none.n == 0);
  CHECK(std::isnan(none.value));
}

TEST_CASE("report stats: the bootstrap interval of a mean matches the exact bootstrap distribution") {
  const std::vector<double> x = {1, 2, 4, 8, 16};  // 5^5 = 3125 resamples enumerated
  const Estimate e = bootstrap(x, Statistic::mean);
  CHECK(e.value == doctest::Approx(6.2));
  const auto exact = exact_bootstrap(x.size(), [&](const std::vector<size_t>& pick) { return mean_of(x, pick); });
  check_percentile(exact, e.ci.lo, 0.025);
  check_percentile(exact, e.ci.hi, 0.975);
  CHECK(e.ci.lo < e.value);
  CHECK(e.ci.hi > e.value);
}

TEST_CASE("report stats: the bootstrap interval of a median matches the exact bootstrap distribution") {
  const std::vector<double> x = {1, 3, 7, 20, 50};
  const Estimate e = bootstrap(x, Statistic::median);
  CHECK(e.value == 7);
  const auto exact = exact_bootstrap(x.size(), [&](const std::vector<size_t>& pick) {
    std::vector<double> v;
    for (size_t i : pick) v.push_back(x[i]);
    std::sort(v.begin(), v.end());
    return v[2];
  });
  check_percentile(exact, e.ci.lo, 0.025);
  check_percentile(exact, e.ci.hi, 0.975);
}

TEST_CASE("report stats: a paired difference resamples pairs, not the two samples apart") {
  // Every pair differs by exactly 1: the paired interval is [1, 1], although the samples
  // themselves spread from 2 to 9 (an unpaired comparison could not tell them apart).
  const Estimate same_shift = bootstrap_difference({3, 5, 7, 9}, {2, 4, 6, 8}, Statistic::mean);
  CHECK(same_shift.value == doctest::Approx(1));
  CHECK(same_shift.ci.lo == doctest::Approx(1));
  CHECK(same_shift.ci.hi == doctest::Approx(1));
  // Differences 1, 2, 3, 0: mean 1.5. The exact distribution of mean(a*) - mean(b*) over all
  // 4^4 resamples of pairs, computed from a and b (not from the differences).
  const std::vector<double> a = {10, 12, 15, 11}, b = {9, 10, 12, 11};
  const Estimate d = bootstrap_difference(a, b, Statistic::mean);
  CHECK(d.value == doctest::Approx(1.5));
  CHECK(d.n == 4);
  const auto exact = exact_bootstrap(4, [&](const std::vector<size_t>& pick) { return mean_of(a, pick) - mean_of(b, pick); });
  check_percentile(exact, d.ci.lo, 0.025);
  check_percentile(exact, d.ci.hi, 0.975);
}

TEST_CASE("report stats: intervals are reproducible to the bit") {
  const std::vector<double> x = {0.3, 1.7, 2.2, 9.1, 4.4, 3.3};
  const Estimate a = bootstrap(x, Statistic::mean), b = bootstrap(x, Statistic::mean);
  CHECK(a.ci.lo == b.ci.lo);
  CHECK(a.ci.hi == b.ci.hi);
}

TEST_CASE("report curve: best so far, carried past the end; evaluations to a target; failure rate") {
  // ok 1.0, failed, ok 3.0, ok 2.0
  const RunCurve c = curve_from_results({{true, 1.0}, {false, 0.0}, {true, 3.0}, {true, 2.0}});
  CHECK(c.best_so_far == std::vector<double>{1, 1, 3, 3});
  CHECK(c.evaluations() == 4);
  CHECK(c.failures == 1);
  CHECK(c.failure_rate() == doctest::Approx(0.25));
  CHECK(c.best_at(2) == 1);
  CHECK(c.best_at(10) == 3);  // the run stopped after 4: its best stays
  CHECK(c.final_best() == 3);
  CHECK(c.evaluations_to_reach(2.5) == 3);
  CHECK(c.evaluations_to_reach(1.0) == 1);
  CHECK_FALSE(c.evaluations_to_reach(3.01).has_value());
  const RunCurve failed_first = curve_from_results({{false, 0.0}, {true, 2.0}});
  CHECK(failed_first.best_at(1) == 0);  // no correct kernel yet
  CHECK(RunCurve{}.best_at(5) == 0);
  // Replay misses (marked by position) are neither failures nor measured evaluations.
  const RunCurve missed = curve_from_results({{true, 1.0}, {false, 0.0}, {false, 0.0}, {true, 2.0}}, {false, true, false, false});
  CHECK(missed.failures == 1);
  CHECK(missed.replay_misses == 1);
  CHECK(missed.failure_rate() == doctest::Approx(1.0 / 3));
  CHECK(missed.replay_miss_rate() == doctest::Approx(0.25));
  CHECK(missed.best_so_far == std::vector<double>{1, 1, 1, 2});
}
