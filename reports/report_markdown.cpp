#include <cmath>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "reports/report_format.hpp"

namespace kmcts {

std::string format_metric_value(const Metric& m, double x, int budget) {
  if (std::isnan(x)) return "-";
  if (std::isinf(x)) return x > 0 ? fmt::format(">{}", budget) : "-inf";
  if (m.budget > 0 || m.key == "final") return fmt::format("{:.2f}", x);
  if (m.key == "failure_rate" || m.key == "replay_misses") return fmt::format("{:.1f}%", 100 * x);
  if (m.key == "dollars") return fmt::format("{:.4f}", x);
  if (m.key == "tokens" || std::fabs(x) >= 100) return fmt::format("{:.0f}", x);
  if (std::fabs(x) >= 1 || x == 0) return fmt::format("{:.1f}", x);
  return fmt::format("{:.2g}", x);  // a fraction of a second keeps two digits
}

namespace {

// Table cells hold one line and no column bars.
std::string cell_text(std::string s) {
  for (char& c : s)
    if (c == '|' || c == '\n' || c == '\r') c = c == '|' ? '/' : ' ';
  return s;
}

bool is_quality(const Metric& m) { return m.budget > 0 || m.key == "final" || m.key == "to_target"; }

// Metrics worth a column: quality ones always, cost ones unless 0 in every run of the grid.
std::vector<size_t> shown_metrics(const GridReport& r, bool quality) {
  std::vector<size_t> out;
  for (size_t m = 0; m < r.metrics.size(); ++m) {
    if (is_quality(r.metrics[m]) != quality) continue;
    bool nonzero = quality;
    for (size_t s = 1; s < r.scopes.size() && !nonzero; ++s)
      for (const auto& [config, seeds] : r.scopes[s].by_config)
        for (const SeedValues& v : seeds) nonzero = nonzero || v.metrics[m].value != 0;
    if (nonzero) out.push_back(m);
  }
  return out;
}

std::string with_ci(const Metric& m, const Estimate& e, int budget, bool sign = false) {
  if (e.n == 0) return "-";
  std::string value = format_metric_value(m, e.value, budget);
  if (sign && e.value > 0 && !std::isinf(e.value)) value = "+" + value;
  return fmt::format("{} [{}, {}]", value, format_metric_value(m, e.ci.lo, budget), format_metric_value(m, e.ci.hi, budget));
}

std::string table_head(const GridReport& r, const std::vector<size_t>& shown, const std::string& first) {
  std::string head = "| " + first + " | n |", rule = "|---|---:|";
  for (size_t m : shown) {
    head += " " + r.metrics[m].label + " |";
    rule += "---:|";
  }
  return head + "\n" + rule + "\n";
}

enum class Column { mean, median, difference };

std::string stats_table(const GridReport& r, size_t scope, const std::vector<size_t>& shown, Column column) {
  const ScopeStats& st = r.stats[scope];
  std::string md = table_head(r, shown, "configuration");
  for (const std::string& config : r.configs) {
    const auto cells = st.cells.find(config);
    if (cells == st.cells.end()) continue;
    const auto diffs = st.vs_baseline.find(config);
    if (column == Column::difference && diffs == st.vs_baseline.end()) continue;
    const int n = column == Column::difference ? diffs->second.front().difference.n : cells->second.front().mean.n;
    md += fmt::format("| {} | {} |", config, n);
    for (size_t m : shown) {
      const Metric& metric = r.metrics[m];
      const CellStats& c = cells->second[m];
      std::string cell = column == Column::mean     ? with_ci(metric, c.mean, r.budget)
                         : column == Column::median ? with_ci(metric, c.median, r.budget)
                                                    : with_ci(metric, diffs->second[m].difference, r.budget, true);
      if (metric.censored && column != Column::difference) cell += fmt::format(" ({}/{} reached)", c.reached, c.mean.n);
      md += " " + cell + " |";
    }
    md += "\n";
  }
  return md;
}

std::string scope_section(const GridReport& r, size_t s, const std::vector<FigureLink>& figures) {
  const Scope& scope = r.scopes[s];
  std::string md = scope.all_problems ? "## All problems\n\n" : fmt::format("## Problem {}\n\n", scope.name);
  if (!scope.all_problems)
    md += fmt::format("Best known speedup {:.2f}x; target {:.2f}x.\n\n", r.best_known.at(scope.name),
                      r.settings.target_fraction * r.best_known.at(scope.name));
  else
    md += "Per seed: geometric mean over problems of speedups, mean over problems of the rest.\n\n";
  for (bool quality : {true, false}) {
    const auto shown = shown_metrics(r, quality);
    if (shown.empty()) continue;
    const char* what = quality ? "Search quality" : "Cost";
    md += fmt::format("### {}: mean [95% CI]\n\n{}\n", what, stats_table(r, s, shown, Column::mean));
    md += fmt::format("### {}: median [95% CI]\n\n{}\n", what, stats_table(r, s, shown, Column::median));
    if (r.configs.size() > 1)
      md += fmt::format("### {}: difference from `{}` (mean of paired differences) [95% CI]\n\n{}\n", what, r.baseline,
                        stats_table(r, s, shown, Column::difference));
  }
  for (const FigureLink& f : figures)
    if (f.scope == scope.name) md += fmt::format("![{}]({})\n\n", f.title, f.path);
  return md;
}

}  // namespace

std::string report_markdown(const GridReport& r, const std::vector<FigureLink>& figures) {
  std::string md = fmt::format("# Ablation report: {}\n\n", r.name);
  md += fmt::format("Grid `{}`: {} configurations x {} problems, budget {} evaluations per run, {} runs done",
                    r.dir, r.configs.size(), r.problems.size(), r.budget, r.runs_done);
  md += r.left_out.empty() ? ".\n" : fmt::format(" ({} left out, listed at the end).\n", r.left_out.size());
  md += fmt::format("Baseline configuration: `{}`.\n\n", r.baseline);
  if (!r.replay_miss_warning.empty()) md += fmt::format("**Warning:** {}\n\n", r.replay_miss_warning);
  md += fmt::format(
      "How to read it: speedups are over each problem's reference; best@B is the best speedup after B "
      "evaluations, final the best at the end of the run. \"evals to {0:g}%\" counts evaluations until a run's "
      "best reached {0:g}% of the best known speedup of its problem (the best any run of this grid found); a "
      "run that never did is censored: it counts as the budget in the mean (a lower bound) and as never "
      "(\">{1}\") in the median. Intervals are 95% percentile bootstrap intervals over seeds ({2} resamples, "
      "fixed seed {3}, so the report is reproducible). Differences are configuration minus baseline, paired by "
      "problem and seed; an interval that excludes 0 is a difference the seeds support.\n\n",
      r.settings.target_fraction * 100, r.budget, kTableResamples, kBootstrapSeed);
  md += "| problem | best known speedup | runs |\n|---|---:|---:|\n";
  for (const std::string& p : r.problems) {
    int runs = 0;
    for (size_t s = 1; s < r.scopes.size(); ++s)
      if (r.scopes[s].name == p)
        for (const auto& [config, seeds] : r.scopes[s].by_config) runs += static_cast<int>(seeds.size());
    md += fmt::format("| {} | {:.2f} | {} |\n", p, r.best_known.at(p), runs);
  }
  md += "\n";
  for (size_t s = 0; s < r.scopes.size(); ++s) md += scope_section(r, s, figures);
  if (!r.left_out.empty()) {
    md += "## Runs left out\n\n| run | status | error |\n|---|---|---|\n";
    for (const AblationRunRow& row : r.left_out)
      md += fmt::format("| {} | {} | {} |\n", row.run_id, row.status,
                        row.error.empty() ? "-" : cell_text(row.error));
    md += "\n";
  }
  return md;
}

}  // namespace kmcts
