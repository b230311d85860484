// The report for tools: CSV and JSON (report_format.hpp).
#include <cmath>

#include <fmt/format.h>

#include "reports/report_format.hpp"

namespace kmcts {
using nlohmann::json;

namespace {

std::string csv_number(double x) {
  if (std::isnan(x)) return "";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return fmt::format("{:.6g}", x);
}

// Names of configurations and problems are the grid's own; quote them when CSV needs it.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

json json_number(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }

json json_estimate_ci(const Estimate& e) { return json::array({json_number(e.ci.lo), json_number(e.ci.hi)}); }

}  // namespace

std::string report_csv(const GridReport& r) {
  std::string csv =
      "scope,config,metric,n,mean,mean_lo,mean_hi,median,median_lo,median_hi,reached,diff,diff_lo,diff_hi,pairs\n";
  for (size_t s = 0; s < r.scopes.size(); ++s) {
    const ScopeStats& st = r.stats[s];
    for (const std::string& config : r.configs) {
      const auto cells = st.cells.find(config);
      if (cells == st.cells.end()) continue;
      const auto diffs = st.vs_baseline.find(config);
      for (size_t m = 0; m < r.metrics.size(); ++m) {
        const CellStats& c = cells->second[m];
        csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{}", csv_field(r.scopes[s].name), csv_field(config),
                           r.metrics[m].key, c.mean.n, csv_number(c.mean.value), csv_number(c.mean.ci.lo),
                           csv_number(c.mean.ci.hi), csv_number(c.median.value), csv_number(c.median.ci.lo),
                           csv_number(c.median.ci.hi), c.reached);
        if (diffs != st.vs_baseline.end()) {
          const Estimate& d = diffs->second[m].difference;
          csv += fmt::format(",{},{},{},{}\n", csv_number(d.value), csv_number(d.ci.lo), csv_number(d.ci.hi), d.n);
        } else {
          csv += ",,,,\n";
        }
      }
    }
  }
  return csv;
}

json report_json(const GridReport& r) {
  json out;
  json left_out = json::array();
  for (const AblationRunRow& row : r.left_out)
    left_out.push_back({{"run_id", row.run_id}, {"status", row.status}, {"error", row.error}});
  out["grid"] = {{"name", r.name},           {"dir", r.dir},           {"baseline", r.baseline},
                 {"budget", r.budget},       {"configs", r.configs},   {"problems", r.problems},
                 {"runs_done", r.runs_done}, {"left_out", left_out}, {"timed_on", r.timed_on},
                 {"replay_miss_warning", r.replay_miss_warning}};
  out["settings"] = {{"budgets", r.settings.budgets},
                     {"target_fraction", r.settings.target_fraction},
                     {"interval", "95% percentile bootstrap over seeds"},
                     {"resamples", kTableResamples},
                     {"band_resamples", kBandResamples},
                     {"bootstrap_seed", kBootstrapSeed}};
  out["best_known"] = r.best_known;
  out["metrics"] = json::array();
  for (const Metric& m : r.metrics)
    out["metrics"].push_back({{"key", m.key},
                              {"label", m.label},
                              {"censored", m.censored},
                              {"across_problems", m.across_problems == Aggregation::geometric_mean ? "geometric_mean" : "mean"}});
  out["scopes"] = json::array();
  for (size_t s = 0; s < r.scopes.size(); ++s) {
    const Scope& scope = r.scopes[s];
    const ScopeStats& st = r.stats[s];
    json configs = json::object();
    for (const auto& [config, seeds] : scope.by_config) {
      json c = {{"seeds", json::array()}, {"metrics", json::object()}};
      for (const SeedValues& v : seeds) c["seeds"].push_back(v.seed);
      const auto diffs = st.vs_baseline.find(config);
      for (size_t m = 0; m < r.metrics.size(); ++m) {
        const CellStats& cell = st.cells.at(config)[m];
        json j = {{"n", cell.mean.n},
                  {"mean", json_number(cell.mean.value)},
                  {"mean_ci", json_estimate_ci(cell.mean)},
                  {"median", json_number(cell.median.value)},
                  {"median_ci", json_estimate_ci(cell.median)},
                  {"reached", cell.reached}};
        if (diffs != st.vs_baseline.end()) {
          const Estimate& d = diffs->second[m].difference;
          j["vs_baseline"] = {{"difference", json_number(d.value)}, {"ci", json_estimate_ci(d)}, {"pairs", d.n}};
        }
        c["metrics"][r.metrics[m].key] = std::move(j);
      }
      configs[config] = std::move(c);
    }
    out["scopes"].push_back({{"name", scope.name}, {"all_problems", scope.all_problems}, {"configs", configs}});
  }
  return out;
}

}  // namespace kmcts
