#pragma once
// The arithmetic of GPU timing, kept free of CUDA so it is unit-tested in CI on recorded
// data (REFERENCE.md, measurement protocol):
// - a sample's time is the union of every kernel, memcpy and memset interval CUPTI recorded on
//   any stream inside the sample's window: work hidden on a side stream still counts, and
//   overlapping work counts once;
// - the speedup's uncertainty is a bootstrap interval of the ratio of medians.
#include <cstdint>
#include <string>
#include <vector>

namespace kmcts::cuda {

struct Interval {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;  // exclusive; end <= start is empty
};

/// Total length of the union of `intervals`, each clipped to [window_start, window_end).
uint64_t union_ns(std::vector<Interval> intervals, uint64_t window_start, uint64_t window_end);

struct RatioInterval {
  double estimate = 0;  // median(reference) / median(candidate)
  double low = 0, high = 0;
};

/// Percentile-bootstrap interval (level 1 - alpha) of median(reference) / median(candidate):
/// `resamples` draws with replacement of each sample set, keyed by `seed` (repeatable).
RatioInterval bootstrap_speedup(const std::vector<double>& reference_ns, const std::vector<double>& candidate_ns,
                                uint64_t seed, int resamples = 2000, double alpha = 0.05);

/// The verdict on a speedup (REFERENCE.md): "faster" only if the interval's lower bound
/// beats 1 + max(3 sigma, 1%), sigma being the relative standard error of the ratio
/// (sqrt(rse_ref^2 + rse_cand^2)); "slower" symmetrically; otherwise "same".
struct SpeedupVerdict {
  std::string call;  // faster | slower | same
  double margin = 0; // the 1 + margin the bound had to beat
};
SpeedupVerdict judge_speedup(const RatioInterval& interval, double rse_reference, double rse_candidate);

}  // namespace kmcts::cuda
