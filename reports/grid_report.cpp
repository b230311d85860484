#include "reports/grid_report.hpp"

#include <map>

namespace kmcts {

CellStats cell_stats(const std::vector<MetricValue>& values, bool censored) {
  std::vector<double> restricted, for_median;
  CellStats c;
  for (const MetricValue& v : values) {
    restricted.push_back(v.value);
    for_median.push_back(censored ? v.for_median() : v.value);
    c.reached += v.reached;
  }
  c.mean = bootstrap(restricted, Statistic::mean);
  c.median = bootstrap(for_median, Statistic::median);
  return c;
}

Comparison compare_to_baseline(const std::vector<SeedValues>& config, const std::vector<SeedValues>& baseline,
                               size_t metric) {
  std::map<int64_t, double> base;
  for (const SeedValues& v : baseline) base[v.seed] = v.metrics[metric].value;
  std::vector<double> a, b;
  for (const SeedValues& v : config) {
    const auto it = base.find(v.seed);
    if (it == base.end()) continue;
    a.push_back(v.metrics[metric].value);
    b.push_back(it->second);
  }
  return {bootstrap_difference(a, b, Statistic::mean)};
}

namespace {

CurveBand curve_band(const std::vector<SeedValues>& seeds, int budget) {
  CurveBand band;
  for (size_t k = 0; k < static_cast<size_t>(budget); ++k) {
    std::vector<double> xs;
    for (const SeedValues& v : seeds) xs.push_back(v.curve[k]);
    const Estimate e = bootstrap(xs, Statistic::mean, kBandResamples);
    band.mean.push_back(e.value);
    band.lo.push_back(e.ci.lo);
    band.hi.push_back(e.ci.hi);
  }
  return band;
}

ScopeStats scope_stats(const Scope& scope, const GridReport& r) {
  ScopeStats s;
  const auto base = scope.by_config.find(r.baseline);
  for (const auto& [config, seeds] : scope.by_config) {
    auto& cells = s.cells[config];
    for (size_t m = 0; m < r.metrics.size(); ++m) {
      std::vector<MetricValue> values;
      for (const SeedValues& v : seeds) values.push_back(v.metrics[m]);
      cells.push_back(cell_stats(values, r.metrics[m].censored));
    }
    if (config != r.baseline && base != scope.by_config.end())
      for (size_t m = 0; m < r.metrics.size(); ++m) s.vs_baseline[config].push_back(compare_to_baseline(seeds, base->second, m));
    s.curves[config] = curve_band(seeds, r.budget);
  }
  return s;
}

}  // namespace

GridReport compute_grid_report(const GridData& grid, const ReportSettings& settings) {
  GridReport r;
  r.name = grid.name;
  r.dir = grid.dir.string();
  r.baseline = grid.baseline;
  r.budget = grid.budget;
  r.settings = settings;
  r.configs = grid.configs;
  r.problems = grid.problems;
  r.best_known = best_known_speedups(grid);
  r.runs_done = static_cast<int>(grid.runs.size());
  r.left_out = grid.left_out;
  r.metrics = report_metrics(settings, grid);
  r.replay_miss_warning = replay_miss_warning(grid.replay_misses);
  r.timed_on = grid.timed_on;
  r.scopes = build_scopes(grid, r.metrics, settings);
  for (const Scope& scope : r.scopes) r.stats.push_back(scope_stats(scope, r));
  return r;
}

}  // namespace kmcts
