#pragma once
// Percentile bootstrap confidence intervals over a small sample (one value per seed, or one
// difference per (problem, seed) pair). Every interval comes from the same fixed stream of
// resample draws, so a report computed twice from the same runs is identical to the bit.
#include <cstdint>
#include <vector>

namespace kmcts {

/// Resamples per interval in tables. With 10,000 resamples the Monte Carlo error of a 2.5%
/// quantile is about sqrt(0.025 * 0.975 / 10000) = 0.16% in probability: far below the
/// sampling error of a handful of seeds, and the whole grid's tables still take well under a
/// second.
inline constexpr int kTableResamples = 10000;
/// Resamples per point of a best-so-far curve's band (one interval per evaluation count; the
/// band is a picture, 2,000 keeps a 400-evaluation grid's curves quick).
inline constexpr int kBandResamples = 2000;
/// The seed of the resample stream (CounterRng(kBootstrapSeed, "kmcts.report.bootstrap")).
inline constexpr uint64_t kBootstrapSeed = 20261207;

enum class Statistic { mean, median };
const char* to_string(Statistic s);

/// The mean, or the median (the middle value; the midpoint of the two middle values for an
/// even count). NaN for an empty sample. Infinite values are allowed (a censored run): the
/// mean is then infinite, the median only if half the sample or more is.
double statistic(Statistic s, std::vector<double> values);

/// The q-quantile (0 <= q <= 1) of sorted values, interpolated linearly between order
/// statistics at position q * (n - 1) (R's type 7).
double quantile_sorted(const std::vector<double>& sorted, double q);

struct Interval {
  double lo = 0;
  double hi = 0;
};

struct Estimate {
  int n = 0;          // sample size
  double value = 0;   // the statistic of the sample itself
  Interval ci;        // 95% percentile bootstrap interval (NaN for an empty sample)
};

/// The statistic and its 95% percentile bootstrap interval: `resamples` resamples of n values
/// drawn with replacement; the interval is the 2.5% and 97.5% quantiles of their statistics.
/// A single value gives the degenerate interval [x, x].
Estimate bootstrap(const std::vector<double>& sample, Statistic s, int resamples = kTableResamples);

/// Paired comparison: the statistic of the differences a[i] - b[i] with its bootstrap
/// interval (resampling pairs, which is resampling the differences). a and b must be equally
/// long.
Estimate bootstrap_difference(const std::vector<double>& a, const std::vector<double>& b, Statistic s,
                              int resamples = kTableResamples);

}  // namespace kmcts
