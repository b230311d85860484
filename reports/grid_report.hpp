#pragma once
// The statistics of a grid report: for every scope (all problems, then each problem) and
// configuration, each metric's mean and median over seeds with 95% bootstrap intervals, the
// paired difference against the baseline configuration, and the best-so-far curve's band.
// Formats (markdown, CSV, JSON) and plots read this; none of them computes anything.
#include <map>
#include <string>
#include <vector>

#include "reports/bootstrap.hpp"
#include "reports/grid_data.hpp"
#include "reports/metrics.hpp"

namespace kmcts {

struct CellStats {
  Estimate mean;     // a censored metric: the restricted mean (censored runs at the budget)
  Estimate median;   // a censored metric: censored runs at +infinity
  int reached = 0;   // runs (seeds) whose value is not censored
};

/// The configuration minus the baseline, paired by seed (within a problem, or on the
/// per-seed across-problems values, which pair problem and seed alike): the mean difference.
struct Comparison {
  Estimate difference;
};

/// Per evaluation count k = 1 .. budget: the mean best-so-far over seeds and its 95% band.
struct CurveBand {
  std::vector<double> mean, lo, hi;
};

struct ScopeStats {
  std::map<std::string, std::vector<CellStats>> cells;         // by config, in metric order
  std::map<std::string, std::vector<Comparison>> vs_baseline;  // configs other than the baseline
  std::map<std::string, CurveBand> curves;                     // by config
};

struct GridReport {
  std::string name;
  std::string dir;
  std::string baseline;
  int budget = 0;
  ReportSettings settings;
  std::vector<std::string> configs;   // by position
  std::vector<std::string> problems;
  std::map<std::string, double> best_known;  // by problem
  int runs_done = 0;
  std::vector<AblationRunRow> left_out;
  std::string replay_miss_warning;    // "" unless the done runs missed too much of the record
  std::string timed_on;               // GridData::timed_on
  std::vector<Metric> metrics;
  std::vector<Scope> scopes;          // all problems first
  std::vector<ScopeStats> stats;      // parallel to scopes
};

GridReport compute_grid_report(const GridData& grid, const ReportSettings& settings);

/// Statistics of one metric over seeds (exposed for tests).
CellStats cell_stats(const std::vector<MetricValue>& values, bool censored);
/// The paired difference of `config` against `baseline` over their common seeds.
Comparison compare_to_baseline(const std::vector<SeedValues>& config, const std::vector<SeedValues>& baseline,
                               size_t metric);

}  // namespace kmcts
