#pragma once
// The metrics of a grid report and their values per configuration and seed, for one problem
// or for all problems together.
//
// Per run (one configuration, problem and seed):
//   best@B        best speedup over the reference after B evaluations (B <= the grid budget)
//   final         best speedup at the end of the run
//   to_target     evaluations until the best reached target x the best known speedup of the
//                 problem (the best any done run of the grid found). A run that never reached
//                 it is censored: it counts as +infinity for the median and as the grid budget
//                 for the mean (a restricted mean, a lower bound) and the differences
//   failure_rate  failed evaluations / evaluations, replay misses left out of both
//   replay_misses replay misses / evaluations (only in a grid that has any)
//   evaluations, tokens, dollars, wall_s, gpu_s   as the index records them (gpu_s is the
//                 measurement time, named "GPU s", "CPU s" or "simulated s" for what was timed)
// Across problems, per configuration and seed (only seeds with a done run of every problem):
// the geometric mean over problems for speedups, the arithmetic mean over problems for the
// rest; to_target counts as reached only if every problem's run reached it.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "reports/grid_data.hpp"

namespace kmcts {

struct ReportSettings {
  std::vector<int> budgets = {10, 25, 50, 100};  // those above the grid budget are dropped
  double target_fraction = 0.98;
};

enum class Aggregation { geometric_mean, mean };

struct Metric {
  std::string key;     // "best@10", "final", "to_target", "failure_rate", "tokens", ...
  std::string label;   // column heading
  Aggregation across_problems = Aggregation::mean;
  bool censored = false;
  int budget = 0;      // for best@B
};

/// The metrics of a report on this grid, in column order: the measurement-time column is named
/// for what its runs timed (GPU, CPU, simulated), and a grid with replay misses gets their share.
std::vector<Metric> report_metrics(const ReportSettings& settings, const GridData& grid);

struct MetricValue {
  double value = 0;      // for a censored metric: the restricted value (budget when not reached)
  bool reached = true;   // false: censored
  /// The value statistics of the median use (+infinity when censored).
  double for_median() const;
};

/// One configuration's values for one seed.
struct SeedValues {
  int64_t seed = 0;
  std::vector<MetricValue> metrics;  // in report_metrics order
  std::vector<double> curve;         // best-so-far after 1 .. grid budget evaluations
  const GridRun* run = nullptr;      // the run, for a one-problem scope
};

struct Scope {
  std::string name;      // "all problems" or the problem's name
  bool all_problems = false;
  std::map<std::string, std::vector<SeedValues>> by_config;  // seeds ascending
};

/// The best speedup any done run found, by problem.
std::map<std::string, double> best_known_speedups(const GridData& grid);

/// The scopes of a report: all problems first, then each problem.
std::vector<Scope> build_scopes(const GridData& grid, const std::vector<Metric>& metrics,
                                const ReportSettings& settings);

}  // namespace kmcts
