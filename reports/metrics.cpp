#include "reports/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace kmcts {

std::vector<Metric> report_metrics(const ReportSettings& settings, const GridData& grid) {
  const int grid_budget = grid.budget;
  std::vector<Metric> metrics;
  std::vector<int> budgets = settings.budgets;
  std::sort(budgets.begin(), budgets.end());
  budgets.erase(std::unique(budgets.begin(), budgets.end()), budgets.end());
  for (int b : budgets)
    if (b > 0 && b <= grid_budget)
      metrics.push_back({fmt::format("best@{}", b), fmt::format("best@{}", b), Aggregation::geometric_mean, false, b});
  metrics.push_back({"final", "final", Aggregation::geometric_mean, false, 0});
  metrics.push_back({"to_target", fmt::format("evals to {:g}%", settings.target_fraction * 100), Aggregation::mean,
                     true, 0});
  metrics.push_back({"failure_rate", "failure rate", Aggregation::mean, false, 0});
  if (grid.replay_misses.misses > 0) metrics.push_back({"replay_misses", "replay misses", Aggregation::mean, false, 0});
  metrics.push_back({"evaluations", "evaluations", Aggregation::mean, false, 0});
  metrics.push_back({"tokens", "tokens", Aggregation::mean, false, 0});
  metrics.push_back({"dollars", "dollars", Aggregation::mean, false, 0});
  metrics.push_back({"wall_s", "wall s", Aggregation::mean, false, 0});
  metrics.push_back({"gpu_s", (grid.timed_on.empty() ? std::string("measurement") : grid.timed_on) + " s",
                     Aggregation::mean, false, 0});
  return metrics;
}

double MetricValue::for_median() const { return reached ? value : std::numeric_limits<double>::infinity(); }

std::map<std::string, double> best_known_speedups(const GridData& grid) {
  std::map<std::string, double> best;
  for (const GridRun& r : grid.runs) best[r.row.problem] = std::max(best[r.row.problem], r.curve.final_best());
  return best;
}

namespace {

MetricValue run_value(const Metric& m, const GridRun& run, double target, int grid_budget) {
  const AblationRunRow& row = run.row;
  const RunCurve& curve = run.curve;
  if (m.budget > 0) return {curve.best_at(m.budget)};
  if (m.key == "final") return {curve.final_best()};
  if (m.key == "to_target") {
    const auto reached = curve.evaluations_to_reach(target);
    return reached ? MetricValue{static_cast<double>(*reached)} : MetricValue{static_cast<double>(grid_budget), false};
  }
  if (m.key == "failure_rate") return {curve.failure_rate()};
  if (m.key == "replay_misses") return {curve.replay_miss_rate()};
  if (m.key == "evaluations") return {static_cast<double>(curve.evaluations())};
  if (m.key == "tokens") return {static_cast<double>(row.tokens.value_or(0))};
  if (m.key == "dollars") return {row.dollars.value_or(0)};
  if (m.key == "wall_s") return {row.wall_s.value_or(0)};
  if (m.key == "gpu_s") return {row.gpu_s.value_or(0)};
  throw std::logic_error("unknown report metric " + m.key);
}

std::vector<double> run_curve_to(const RunCurve& curve, int budget) {
  std::vector<double> out(static_cast<size_t>(budget));
  for (int k = 1; k <= budget; ++k) out[static_cast<size_t>(k) - 1] = curve.best_at(k);
  return out;
}

double combine(Aggregation a, const std::vector<double>& xs) {
  double sum = 0;
  for (double x : xs) sum += a == Aggregation::geometric_mean ? std::log(x) : x;  // log(0) = -inf: geomean 0
  const double mean = sum / static_cast<double>(xs.size());
  return a == Aggregation::geometric_mean ? std::exp(mean) : mean;
}

// The across-problems value of one seed from its per-problem values (same seed, every problem).
SeedValues combine_problems(const std::vector<Metric>& metrics, const std::vector<const SeedValues*>& per_problem) {
  SeedValues out;
  out.seed = per_problem.front()->seed;
  for (size_t i = 0; i < metrics.size(); ++i) {
    std::vector<double> xs;
    bool reached = true;
    for (const SeedValues* v : per_problem) {
      xs.push_back(v->metrics[i].value);
      reached = reached && v->metrics[i].reached;
    }
    out.metrics.push_back({combine(metrics[i].across_problems, xs), reached});
  }
  const size_t length = per_problem.front()->curve.size();
  for (size_t k = 0; k < length; ++k) {
    std::vector<double> xs;
    for (const SeedValues* v : per_problem) xs.push_back(v->curve[k]);
    out.curve.push_back(combine(Aggregation::geometric_mean, xs));
  }
  return out;
}

}  // namespace

std::vector<Scope> build_scopes(const GridData& grid, const std::vector<Metric>& metrics,
                                const ReportSettings& settings) {
  const auto best = best_known_speedups(grid);
  std::vector<Scope> scopes(1);
  scopes[0].name = "all problems";
  scopes[0].all_problems = true;
  for (const std::string& problem : grid.problems) {
    Scope s;
    s.name = problem;
    for (const GridRun& run : grid.runs) {
      if (run.row.problem != problem) continue;
      SeedValues v;
      v.seed = run.row.seed;
      v.run = &run;
      for (const Metric& m : metrics)
        v.metrics.push_back(run_value(m, run, settings.target_fraction * best.at(problem), grid.budget));
      v.curve = run_curve_to(run.curve, grid.budget);
      s.by_config[run.row.config].push_back(std::move(v));
    }
    for (auto& [config, seeds] : s.by_config)
      std::sort(seeds.begin(), seeds.end(), [](const SeedValues& a, const SeedValues& b) { return a.seed < b.seed; });
    scopes.push_back(std::move(s));
  }
  // Across problems: the seeds every problem has, per configuration.
  for (const std::string& config : grid.configs) {
    std::map<int64_t, std::vector<const SeedValues*>> by_seed;
    for (size_t p = 1; p < scopes.size(); ++p) {
      const auto it = scopes[p].by_config.find(config);
      if (it == scopes[p].by_config.end()) continue;
      for (const SeedValues& v : it->second) by_seed[v.seed].push_back(&v);
    }
    for (const auto& [seed, per_problem] : by_seed)
      if (per_problem.size() == grid.problems.size())
        scopes[0].by_config[config].push_back(combine_problems(metrics, per_problem));
  }
  return scopes;
}

}  // namespace kmcts
