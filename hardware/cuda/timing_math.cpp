#include "hardware/cuda/timing_math.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/rng.hpp"

namespace kmcts::cuda {

uint64_t union_ns(std::vector<Interval> intervals, uint64_t window_start, uint64_t window_end) {
  for (auto& i : intervals) {
    i.start_ns = std::max(i.start_ns, window_start);
    i.end_ns = std::min(i.end_ns, window_end);
  }
  std::erase_if(intervals, [](const Interval& i) { return i.end_ns <= i.start_ns; });
  std::sort(intervals.begin(), intervals.end(), [](const Interval& a, const Interval& b) { return a.start_ns < b.start_ns; });
  uint64_t total = 0, cover_start = 0, cover_end = 0;
  bool open = false;
  for (const auto& i : intervals) {
    if (open && i.start_ns <= cover_end) {
      cover_end = std::max(cover_end, i.end_ns);
      continue;
    }
    if (open) total += cover_end - cover_start;
    cover_start = i.start_ns;
    cover_end = i.end_ns;
    open = true;
  }
  if (open) total += cover_end - cover_start;
  return total;
}

namespace {

double median(std::vector<double> v) {
  const size_t n = v.size(), mid = n / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  double m = v[mid];
  if (n % 2 == 0) m = (m + *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid))) / 2;
  return m;
}

std::vector<double> resample(const std::vector<double>& v, CounterRng& rng) {
  std::vector<double> out(v.size());
  for (auto& x : out) x = v[static_cast<size_t>(rng.below(v.size()))];
  return out;
}

}  // namespace

RatioInterval bootstrap_speedup(const std::vector<double>& reference_ns, const std::vector<double>& candidate_ns,
                                uint64_t seed, int resamples, double alpha) {
  if (reference_ns.empty() || candidate_ns.empty()) throw std::invalid_argument("bootstrap_speedup: empty sample set");
  RatioInterval r;
  r.estimate = median(reference_ns) / median(candidate_ns);
  CounterRng rng(seed, 0x5eed);
  std::vector<double> ratios;
  ratios.reserve(static_cast<size_t>(resamples));
  for (int b = 0; b < resamples; ++b) ratios.push_back(median(resample(reference_ns, rng)) / median(resample(candidate_ns, rng)));
  std::sort(ratios.begin(), ratios.end());
  auto at = [&](double q) {
    const double pos = q * static_cast<double>(ratios.size() - 1);
    const size_t lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(lo + 1, ratios.size() - 1);
    return ratios[lo] + (pos - static_cast<double>(lo)) * (ratios[hi] - ratios[lo]);
  };
  r.low = at(alpha / 2);
  r.high = at(1 - alpha / 2);
  return r;
}

SpeedupVerdict judge_speedup(const RatioInterval& interval, double rse_reference, double rse_candidate) {
  SpeedupVerdict v;
  v.margin = std::max(3 * std::hypot(rse_reference, rse_candidate), 0.01);
  if (interval.low > 1 + v.margin) v.call = "faster";
  else if (interval.high < 1 / (1 + v.margin)) v.call = "slower";
  else v.call = "same";
  return v;
}

}  // namespace kmcts::cuda
