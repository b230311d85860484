#pragma once
// A grid report as text: markdown for people, CSV (one tidy row per scope, configuration and
// metric) and JSON for tools.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/grid_report.hpp"

namespace kmcts {

/// A figure the markdown links to, under its scope's section.
struct FigureLink {
  std::string scope;   // Scope::name
  std::string title;
  std::string path;    // relative to the markdown file
};

/// Header, how to read it, best known speedups, then per scope (all problems first): search
/// quality (mean, median, difference from the baseline), then cost (the same); runs left out.
/// Cost metrics that are 0 in every run (tokens and dollars of offline agents) are left out.
std::string report_markdown(const GridReport& report, const std::vector<FigureLink>& figures = {});

/// Header: scope,config,metric,n,mean,mean_lo,mean_hi,median,median_lo,median_hi,reached,
/// diff,diff_lo,diff_hi,pairs (diff: mean paired difference from the baseline; empty for the
/// baseline itself). "inf" for a median that is not reached. LF line ends.
std::string report_csv(const GridReport& report);

/// {"grid", "settings", "best_known", "metrics", "scopes": [{"name", "configs": {CONFIG:
/// {"seeds", "metrics": {KEY: {"n", "mean", "mean_ci", "median", "median_ci", "reached",
/// "vs_baseline": {"difference", "ci", "pairs"}}}}}}]}; infinite values as null.
nlohmann::json report_json(const GridReport& report);

/// A value as the tables show it: speedups 2 decimals, rates in percent, counts and seconds
/// by size; an infinite evaluation count as ">BUDGET".
std::string format_metric_value(const Metric& metric, double value, int budget);

}  // namespace kmcts
