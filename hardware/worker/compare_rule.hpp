#pragma once
// The output comparison rule (tensors.hpp, compare_outputs) as a reduction that runs on the
// host or, built by nvcc, on the GPU: each side folds elements into an OutputSummary, summaries
// of disjoint ranges merge, and the host turns the final one into a verdict and a message.
// The rule, fp32 and fp64 alike:
//  1. expected NaN needs got NaN; expected +-Inf needs the same Inf; otherwise got must be finite;
//  2. elementwise allclose: |got - exp| <= atol + rtol * |exp|;
//  3. scale-aware: max |got - exp| <= max(atol, rtol) * max |exp| over finite expected
//     elements, so an output whose values are all far below atol cannot pass as zeros.
#include <cmath>
#include <cstdint>

#include "hardware/worker/host_device.hpp"

namespace kmcts::worker {

/// The poison NaNs: quiet NaNs with a payload a computation is unlikely to produce, so a
/// report can say "not written" rather than "computed NaN". Both workers poison with them.
inline constexpr uint32_t kPoisonF32 = 0x7fc0deadu;
inline constexpr uint64_t kPoisonF64 = 0x7ff800000000deadull;


/// Rules 1 and 2 for one element.
KMCTS_HOST_DEVICE inline bool element_matches(double expected, double got, double atol, double rtol) {
  if (std::isnan(expected)) return std::isnan(got);
  if (std::isinf(expected)) return got == expected;
  if (!std::isfinite(got)) return false;
  return std::fabs(got - expected) <= atol + rtol * std::fabs(expected);
}

/// What comparing a range of one output found. Indices are -1 when nothing was found.
struct OutputSummary {
  int64_t first_bad = -1;   // lowest index failing rules 1-2
  int64_t worst = -1;       // lowest index of the largest finite |got - exp|
  int64_t unwritten = 0;    // elements still holding the poison NaN where a number was expected
  double max_abs = 0;       // largest |got - exp| over finite pairs
  double max_rel = 0;       // largest |got - exp| / |exp| over finite pairs, exp != 0
  double scale = 0;         // largest |exp| over finite pairs

  /// Folds element `i`; call in increasing i within one summary.
  KMCTS_HOST_DEVICE void add(int64_t i, double x, double y, bool poison, double atol, double rtol) {
    if (poison && !std::isnan(x)) ++unwritten;
    if (std::isfinite(x) && std::isfinite(y)) {
      const double diff = std::fabs(y - x);
      scale = std::fmax(scale, std::fabs(x));
      if (diff > max_abs) max_abs = diff, worst = i;
      if (x != 0) max_rel = std::fmax(max_rel, diff / std::fabs(x));
    }
    if (first_bad < 0 && !element_matches(x, y, atol, rtol)) first_bad = i;
  }

  /// Combines with the summary of another, disjoint range (in any order).
  KMCTS_HOST_DEVICE void merge(const OutputSummary& o) {
    if (o.first_bad >= 0 && (first_bad < 0 || o.first_bad < first_bad)) first_bad = o.first_bad;
    if (o.worst >= 0 && (o.max_abs > max_abs || (o.max_abs == max_abs && (worst < 0 || o.worst < worst))))
      max_abs = o.max_abs, worst = o.worst;
    unwritten += o.unwritten;
    max_rel = std::fmax(max_rel, o.max_rel);
    scale = std::fmax(scale, o.scale);
  }

  /// Rule 3 applied: the index to report (first_bad, else worst if the scale rule fails), or -1.
  KMCTS_HOST_DEVICE int64_t failing_index(double atol, double rtol) const {
    if (first_bad >= 0) return first_bad;
    return max_abs > std::fmax(atol, rtol) * scale ? worst : -1;
  }
};

}  // namespace kmcts::worker
