#include "reports/bootstrap.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "core/rng.hpp"

namespace kmcts {

const char* to_string(Statistic s) { return s == Statistic::mean ? "mean" : "median"; }

double statistic(Statistic s, std::vector<double> values) {
  const size_t n = values.size();
  if (n == 0) return std::numeric_limits<double>::quiet_NaN();
  if (s == Statistic::mean) return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(n);
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(values.begin(), middle, values.end());
  if (n % 2 == 1) return *middle;
  const double upper = *middle;
  const double lower = *std::max_element(values.begin(), middle);
  // inf + inf / 2 stays inf; a finite and an infinite middle give inf, as they should.
  return lower == upper ? lower : lower + (upper - lower) / 2;
}

double quantile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return std::numeric_limits<double>::quiet_NaN();
  const double position = q * static_cast<double>(sorted.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(position));
  const size_t above = std::min(below + 1, sorted.size() - 1);
  const double weight = position - static_cast<double>(below);
  if (weight == 0 || sorted[below] == sorted[above]) return sorted[below];
  return sorted[below] + weight * (sorted[above] - sorted[below]);
}

Estimate bootstrap(const std::vector<double>& sample, Statistic s, int resamples) {
  Estimate e;
  e.n = static_cast<int>(sample.size());
  e.value = statistic(s, sample);
  if (sample.empty()) {
    e.ci = {e.value, e.value};
    return e;
  }
  CounterRng rng(kBootstrapSeed, string_key("kmcts.report.bootstrap"));
  std::vector<double> stats(static_cast<size_t>(resamples));
  std::vector<double> draw(sample.size());
  for (double& stat : stats) {
    for (double& x : draw) x = sample[rng.below(sample.size())];
    stat = statistic(s, draw);
  }
  std::sort(stats.begin(), stats.end());
  e.ci = {quantile_sorted(stats, 0.025), quantile_sorted(stats, 0.975)};
  return e;
}

Estimate bootstrap_difference(const std::vector<double>& a, const std::vector<double>& b, Statistic s, int resamples) {
  if (a.size() != b.size()) throw std::invalid_argument("bootstrap_difference: samples of different sizes");
  std::vector<double> differences(a.size());
  for (size_t i = 0; i < a.size(); ++i) differences[i] = a[i] - b[i];
  return bootstrap(differences, s, resamples);
}

}  // namespace kmcts
