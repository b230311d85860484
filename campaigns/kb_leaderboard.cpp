#include "campaigns/kb_leaderboard.hpp"

#include <cmath>

#include <fmt/format.h>

namespace kmcts {

using nlohmann::json;

namespace {

const char* const kBaselines[] = {"eager", "compile"};

std::optional<double> speedup_of(const json& p, const std::string& baseline) {
  if (!p.value("correct", false)) return std::nullopt;
  const json s = p.value("speedup", json::object());
  if (!s.contains(baseline) || !s[baseline].is_number()) return std::nullopt;
  const double v = s[baseline].get<double>();
  if (!(v > 0) || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::string p_key(double p) { return fmt::format("{:g}", p); }

std::string number_or_dash(const json& v, const char* format) {
  return v.is_number() ? fmt::format(fmt::runtime(format), v.get<double>()) : std::string("-");
}

}  // namespace

double fast_p(const std::vector<json>& problems, const std::string& baseline, double p) {
  if (problems.empty()) return 0.0;
  size_t fast = 0;
  for (const json& r : problems)
    if (auto s = speedup_of(r, baseline); s && *s > p) ++fast;
  return static_cast<double>(fast) / static_cast<double>(problems.size());
}

json leaderboard_summary(const std::vector<json>& problems) {
  const size_t n = problems.size();
  size_t correct = 0;
  for (const json& r : problems) correct += r.value("correct", false) ? 1 : 0;
  json s = {{"problems", n},
            {"correct", correct},
            {"correct_fraction", n ? static_cast<double>(correct) / static_cast<double>(n) : 0.0}};
  for (const char* b : kBaselines) {
    json fp = json::object();
    for (double p : kFastP) fp[p_key(p)] = fast_p(problems, b, p);
    s["fast_p"][b] = fp;
    double log_sum = 0, sum = 0;
    size_t k = 0;
    for (const json& r : problems)
      if (auto v = speedup_of(r, b)) log_sum += std::log(*v), sum += *v, ++k;
    s["geomean_speedup"][b] = k ? json(std::exp(log_sum / static_cast<double>(k))) : json(nullptr);
    s["mean_speedup"][b] = k ? json(sum / static_cast<double>(k)) : json(nullptr);
    s["speedups_counted"][b] = k;
  }
  json totals = json::object();
  for (const char* key : {"evaluations", "gpu_seconds", "wall_seconds", "tokens", "dollars"}) {
    double t = 0;
    for (const json& r : problems) t += r.value(key, 0.0);
    totals[key] = t;
    s["cost_per_problem"][key] = n ? t / static_cast<double>(n) : 0.0;
  }
  s["totals"] = totals;
  s["excessive_speedups"] = json::array();
  s["vacuous"] = json::array();
  s["failed"] = json::array();
  for (const json& r : problems) {
    const std::string name = r.value("problem", "");
    for (const char* b : kBaselines)
      if (auto v = speedup_of(r, b); v && *v > kExcessiveSpeedup)
        s["excessive_speedups"].push_back({{"problem", name}, {"baseline", b}, {"speedup", *v}});
    const json hygiene = r.value("hygiene", json::object());
    const json findings = hygiene.value("findings", json::array());
    // A problem whose reference cannot run is listed once, with the search that failed on it.
    const bool evaluated = r.value("status", "") == "completed";
    if (!findings.empty() || (hygiene.contains("error") && evaluated))
      s["vacuous"].push_back({{"problem", name}, {"findings", findings}, {"error", hygiene.value("error", "")}});
    if (!evaluated)
      s["failed"].push_back({{"problem", name}, {"status", r.value("status", "")}, {"message", r.value("message", "")}});
  }
  return s;
}

std::string leaderboard_markdown(const json& s, const json& run) {
  std::string md = fmt::format("# KernelBench level {} ({} mode)\n\n", run.value("level", 0), run.value("mode", ""));
  const json budget = run.value("budget", json());  // null: each search's own search.budget
  md += fmt::format("{} problems, {} correct ({:.1f}%); budget {} per problem.\n\n", s.value("problems", 0),
                    s.value("correct", 0), 100.0 * s.value("correct_fraction", 0.0),
                    budget.is_number() ? fmt::format("{} evaluations", budget.get<int64_t>()) : "search.budget");
  md += "| baseline |";
  for (double p : kFastP) md += fmt::format(" fast_{} |", p_key(p));
  md += " geomean speedup | mean speedup | problems with a speedup |\n|---|";
  for (size_t k = 0; k < std::size(kFastP); ++k) md += "---|";
  md += "---|---|---|\n";
  for (const char* b : kBaselines) {
    if (std::string(b) == "compile" && !run.value("compile_baseline", true)) continue;  // --no-compile-baseline
    md += fmt::format("| {} |", b);
    for (double p : kFastP) md += fmt::format(" {:.3f} |", s["fast_p"][b].value(p_key(p), 0.0));
    md += fmt::format(" {} | {} | {} |\n", number_or_dash(s["geomean_speedup"][b], "{:.3f}"),
                      number_or_dash(s["mean_speedup"][b], "{:.3f}"), s["speedups_counted"].value(b, 0));
  }
  const json& c = s["cost_per_problem"];
  md += fmt::format(
      "\nCost per problem (mean): {:.1f} evaluations, {:.1f} GPU-s, {:.1f} s wall, {:.0f} tokens, ${:.4f}.\n",
      c.value("evaluations", 0.0), c.value("gpu_seconds", 0.0), c.value("wall_seconds", 0.0), c.value("tokens", 0.0),
      c.value("dollars", 0.0));
  auto list = [&md](const json& items, const std::string& title, auto&& line) {
    md += fmt::format("\n## {} ({})\n\n", title, items.size());
    if (items.empty()) md += "None.\n";
    for (const json& it : items) md += "- " + line(it) + "\n";
  };
  list(s["excessive_speedups"], fmt::format("Speedups over {:g}x, to audit", kExcessiveSpeedup), [](const json& it) {
    return fmt::format("{}: {:.2f}x vs {}", it.value("problem", ""), it.value("speedup", 0.0), it.value("baseline", ""));
  });
  list(s["vacuous"], "Problems whose check may be vacuous (hygiene)", [](const json& it) {
    std::string why = it.value("error", "");
    for (const json& f : it.value("findings", json::array()))
      why += (why.empty() ? "" : "; ") +
             (f.is_object() ? fmt::format("{} ({})", f.value("finding", ""), f.value("detail", "")) : f.dump());
    return fmt::format("{}: {}", it.value("problem", ""), why);
  });
  list(s["failed"], "Problems without a finished search (not evaluable, or interrupted)", [](const json& it) {
    return fmt::format("{}: {} {}", it.value("problem", ""), it.value("status", ""), it.value("message", ""));
  });
  return md;
}

}  // namespace kmcts
