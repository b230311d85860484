#pragma once
// Search quality: evaluations a strategy needs to come within a tolerance of the best variant
// of an enumerable space. Two kinds of landscape: synthetic ones (the synthetic evaluator in
// space mode; the optimum is found by enumerating its formula) and recorded ones (an
// exhaustive sweep of a real problem, answered by the replay evaluator; the optimum is the
// best recorded measurement).
#include <functional>
#include <string>
#include <vector>

#include "common/bench_util.hpp"
#include "core/options.hpp"

namespace kmcts::bench {

struct Landscape {
  std::string name;
  double interaction = 0, ruggedness = 0;
  std::vector<std::string> agents;  // "key=value" settings of the agents ({} = the rule agents)
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
  fs::path keep_runs;  // "" = run directories are removed; else kept as keep_runs/STRATEGY/seedN
};

/// Sets the evaluator of one search (the strategy and the search seed are set by the caller).
using EvaluatorSetup = std::function<void(Config&, uint64_t seed)>;

/// The best speedup of any valid, non-failing point of the problem's space on the landscape
/// with this seed: what the synthetic evaluator would report for it (noise 0).
double true_best_speedup(const QualitySettings& settings, const Landscape& landscape, uint64_t seed);
/// The synthetic evaluator on that landscape, one landscape per seed.
EvaluatorSetup synthetic_setup(const QualitySettings& settings, const Landscape& landscape);

struct Recorded {
  std::vector<fs::path> runs;  // run directories of one problem on one machine
  double best_speedup = 0;     // the best ok measurement among them
  int variants = 0;            // distinct variants (canonical sources) measured
  int failed = 0;              // of which failed
  int valid_points = 0;        // valid points of the problem's space (a complete sweep measured all)
  nlohmann::json device;       // the recorded evaluator's description
};
/// Reads the recorded runs; InputError if one is missing or of another problem.
Recorded read_recorded(const fs::path& problem, const std::vector<fs::path>& runs);
/// The replay evaluator over the recorded runs (a miss is an error result, never a real run).
/// With `agents` ("key=value" settings), the search's agents are those (the agent simulator).
EvaluatorSetup recorded_setup(const Recorded& recorded, const std::vector<std::string>& agents = {});

/// Runs one search; returns the 1-based number of evaluations (the seed's included) after
/// which a variant within the tolerance of `best` had been measured, or 0 if none was.
int evaluations_to_reach(const QualitySettings& settings, const EvaluatorSetup& evaluator, const StrategySpec& strategy,
                         uint64_t seed, double best, const fs::path& run_dir);

}  // namespace kmcts::bench
