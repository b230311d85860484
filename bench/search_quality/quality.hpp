#pragma once
// Search quality on synthetic landscapes: evaluations a strategy needs to come within a
// tolerance of the space's true optimum, which is known because the space is enumerable.
#include <string>
#include <vector>

#include "common/bench_util.hpp"
#include "core/options.hpp"

namespace kmcts::bench {

struct Landscape {
  std::string name;
  double interaction = 0, ruggedness = 0;
};

struct StrategySpec {
  std::string name;                 // as printed
  std::vector<std::string> settings;  // "key=value" config assignments
};

struct QualitySettings {
  fs::path problem;
  int budget = 300;
  double tolerance = 0.02;     // within 2% of the best speedup
  double failure_rate = 0.15;  // evaluator.synthetic.failure_rate (the engine's default)
};

/// The best speedup of any valid, non-failing point of the problem's space on the landscape
/// with this seed: what the synthetic evaluator would report for it (noise 0).
double true_best_speedup(const QualitySettings& settings, const Landscape& landscape, uint64_t seed);

/// Runs one search; returns the 1-based number of evaluations (the seed's included) after
/// which a variant within the tolerance of `best` had been measured, or 0 if none was.
int evaluations_to_reach(const QualitySettings& settings, const Landscape& landscape, const StrategySpec& strategy,
                         uint64_t seed, double best, const fs::path& run_dir);

}  // namespace kmcts::bench
