#pragma once
// The input distributions (problem.json "distributions"), one definition for the host (the
// cpu worker's fills) and the device (the CUDA worker fills its inputs on the GPU): element
// k of a fill block takes draws [k * draws_per_element, ...) of the block's CounterRng, so
// any element can be drawn on its own, by any thread. Host and device values agree up to the
// last ulp of log/cos/sqrt.
#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>

#include "core/rng.hpp"
#include "hardware/worker/host_device.hpp"

namespace kmcts::worker {

enum class Distribution : int32_t { uniform, normal, negative, heavy_tailed };

/// The distribution a problem names, or nullopt (core/problem.cpp rejects unknown names).
inline std::optional<Distribution> parse_distribution(std::string_view name) {
  if (name == "uniform") return Distribution::uniform;
  if (name == "normal") return Distribution::normal;
  if (name == "negative") return Distribution::negative;
  if (name == "heavy_tailed") return Distribution::heavy_tailed;
  return std::nullopt;
}

/// Elements per independent counter stream in a fill; block 0 of a tensor keeps the tensor's
/// key, block b > 0 uses mix64(key ^ mix64(b)).
inline constexpr int64_t kFillBlock = 1 << 16;

/// Heavy-tailed draws are clipped here: 30+ standard deviations of outliers, yet sums of
/// millions of them stay far from fp32 overflow.
inline constexpr double kHeavyTailClip = 100.0;

KMCTS_HOST_DEVICE constexpr uint64_t draws_per_element(Distribution d) {
  return d == Distribution::normal ? 2 : d == Distribution::heavy_tailed ? 8 : 1;
}

KMCTS_HOST_DEVICE inline double standard_normal(CounterRng& rng) {
  // Box-Muller; 1 - u keeps the logarithm's argument in (0, 1].
  const double u1 = 1.0 - rng.uniform(), u2 = rng.uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

/// One element's value; consumes exactly draws_per_element(d) draws.
KMCTS_HOST_DEVICE inline double draw(Distribution d, CounterRng& rng) {
  switch (d) {
    case Distribution::normal:
      return standard_normal(rng);
    case Distribution::negative:  // strictly negative and away from zero: abs/relu/sign mistakes show
      return -(0.5 + 1.5 * rng.uniform());
    case Distribution::heavy_tailed: {  // Student-t, 3 degrees of freedom: polynomial tails
      const double z = standard_normal(rng);
      double chi2 = 0;
      for (int k = 0; k < 3; ++k) {
        const double n = standard_normal(rng);
        chi2 += n * n;
      }
      const double t = z / std::sqrt(chi2 / 3.0 + 1e-300);
      return t < -kHeavyTailClip ? -kHeavyTailClip : t > kHeavyTailClip ? kHeavyTailClip : t;
    }
    case Distribution::uniform:
      break;
  }
  return rng.uniform();  // [0, 1)
}

/// Element `k` of a tensor filled from (seed, key): the host loop and a GPU thread both call it.
KMCTS_HOST_DEVICE inline double fill_value(Distribution d, uint64_t seed, uint64_t key, int64_t k) {
  const int64_t block = k / kFillBlock;
  CounterRng rng(seed, block == 0 ? key : mix64(key ^ mix64(static_cast<uint64_t>(block))));
  rng.skip(static_cast<uint64_t>(k % kFillBlock) * draws_per_element(d));
  return draw(d, rng);
}

}  // namespace kmcts::worker
