#include "campaigns/kb_leaderboard.hpp"

#include <algorithm>
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

// The lower bound of the speedup's interval against `baseline`, if the result has one.
std::optional<double> ci_low_of(const json& p, const std::string& baseline) {
  const json ci = p.value("speedup_ci", json::object());
  if (!ci.contains(baseline) || !ci[baseline].is_array() || ci[baseline].empty() || !ci[baseline][0].is_number())
    return std::nullopt;
  return ci[baseline][0].get<double>();
}

std::optional<double> own_share(const json& p) {
  const json v = p.value("own_share", json());
  return v.is_number() ? std::optional<double>(v.get<double>()) : std::nullopt;
}

std::optional<double> seed_speedup(const json& p) {
  const json seed = p.value("seed", json::object());
  const json s = seed.value("speedup", json::object());
  return s.contains("eager") && s["eager"].is_number() ? std::optional<double>(s["eager"].get<double>()) : std::nullopt;
}

json or_null(const std::optional<double>& v) {
  json out = nullptr;
  if (v.has_value()) out = v.value();
  return out;
}

std::string p_key(double p) { return fmt::format("{:g}", p); }

json fast_table(const std::vector<json>& problems, const std::string& baseline, bool confident,
                std::optional<double> min_own_share) {
  json fp = json::object();
  for (double p : kFastP) fp[p_key(p)] = fast_p(problems, baseline, p, confident, min_own_share);
  return fp;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string number_or_dash(const json& v, const char* format) {
  return v.is_number() ? fmt::format(fmt::runtime(format), v.get<double>()) : std::string("-");
}

}  // namespace

double fast_p(const std::vector<json>& problems, const std::string& baseline, double p, bool confident,
              std::optional<double> min_own_share) {
  if (problems.empty()) return 0.0;
  size_t fast = 0;
  for (const json& r : problems) {
    const auto s = speedup_of(r, baseline);
    if (!s || !(*s > p)) continue;
    if (min_own_share) {
      const auto share = own_share(r);
      if (!share || *share < *min_own_share) continue;
    }
    if (confident && p >= 1.0)
      if (const auto low = ci_low_of(r, baseline); low && !(*low > p * (1 + kFasterMargin))) continue;
    ++fast;
  }
  return static_cast<double>(fast) / static_cast<double>(problems.size());
}

json leaderboard_summary(const std::vector<json>& problems, const LeaderboardOptions& options) {
  const size_t n = problems.size();
  size_t correct = 0;
  for (const json& r : problems) correct += r.value("correct", false) ? 1 : 0;
  json s = {{"problems", n},
            {"correct", correct},
            {"correct_fraction", n ? static_cast<double>(correct) / static_cast<double>(n) : 0.0}};
  s["own_share_threshold"] = options.own_share_threshold;
  for (const char* b : kBaselines) {
    s["fast_p"][b] = fast_table(problems, b, true, std::nullopt);
    s["fast_p_point"][b] = fast_table(problems, b, false, std::nullopt);
    s["fast_p_own"][b] = fast_table(problems, b, true, options.own_share_threshold);
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
  // What the measurement seconds were spent on: "GPU", "CPU", or "" (mixed, or unknown).
  std::string timed;
  for (size_t i = 0; i < problems.size(); ++i) {
    const std::string t = problems[i].value("timed_on", "");
    timed = i == 0 || t == timed ? t : "";
  }
  s["timed_on"] = timed;
  std::vector<double> shares, seeds;
  json flagged = json::array(), per_problem = json::array();
  size_t below = 0;
  for (const json& r : problems) {
    const std::string name = r.value("problem", "");
    std::optional<double> share;
    if (r.value("correct", false)) share = own_share(r);
    if (share.has_value()) {
      shares.push_back(share.value());
      if (share.value() < options.own_share_threshold) ++below;
    }
    const auto seed = seed_speedup(r);
    if (seed) {
      seeds.push_back(*seed);
      if (std::abs(*seed - 1.0) > kSeedAaTolerance) flagged.push_back({{"problem", name}, {"seed_speedup", *seed}});
    }
    const auto eager = speedup_of(r, "eager");
    per_problem.push_back({{"problem", name},
                           {"correct", r.value("correct", false)},
                           {"speedup", or_null(eager)},
                           {"ci_low", or_null(ci_low_of(r, "eager"))},
                           {"own_share", or_null(share)},
                           {"seed_speedup", or_null(seed)}});
  }
  s["own_share"] = {{"measured", shares.size()},
                    {"median", shares.empty() ? json() : json(median_of(shares))},
                    {"below_threshold", below}};
  s["seed_aa"] = {{"seeds", seeds.size()},
                  {"median", seeds.empty() ? json() : json(median_of(seeds))},
                  {"tolerance", kSeedAaTolerance},
                  {"flagged", flagged}};
  s["per_problem"] = per_problem;
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
    for (const auto& [key, label] : {std::pair{"fast_p", ""}, std::pair{"fast_p_point", " (point)"},
                                     std::pair{"fast_p_own", " (own kernels)"}}) {
      md += fmt::format("| {}{} |", b, label);
      for (double p : kFastP) md += fmt::format(" {:.3f} |", s[key][b].value(p_key(p), 0.0));
      md += std::string(key) == "fast_p"
                ? fmt::format(" {} | {} | {} |\n", number_or_dash(s["geomean_speedup"][b], "{:.3f}"),
                              number_or_dash(s["mean_speedup"][b], "{:.3f}"), s["speedups_counted"].value(b, 0))
                : " | | |\n";
    }
  }
  md += fmt::format(
      "\nfast_p for p >= 1 counts a problem only when its speedup's 95% interval clears p by {:g}%; (point) is "
      "KernelBench's count on the point estimate; (own kernels) keeps candidates whose own kernels took at least "
      "{:.0f}% of their kernel time.\n",
      100 * kFasterMargin, 100 * s.value("own_share_threshold", 0.0));
  const json& share = s["own_share"];
  md += fmt::format("Own-kernel share of the best candidates: median {}, {} of {} measured below {:.0f}%.\n",
                    number_or_dash(share["median"], "{:.3f}"), share.value("below_threshold", 0),
                    share.value("measured", 0), 100 * s.value("own_share_threshold", 0.0));
  const json& aa = s["seed_aa"];
  md += fmt::format("Seeds (the reference against itself, an A/A check): median {}, {} of {} outside +-{:g}%.\n",
                    number_or_dash(aa["median"], "{:.4f}"), aa["flagged"].size(), aa.value("seeds", 0),
                    100 * aa.value("tolerance", 0.0));
  const json& c = s["cost_per_problem"];
  md += fmt::format(
      "\nCost per problem (mean): {:.1f} evaluations, {:.1f} {}-s, {:.1f} s wall, {:.0f} tokens, ${:.4f}.\n",
      c.value("evaluations", 0.0), c.value("gpu_seconds", 0.0),
      s.value("timed_on", "").empty() ? std::string("measurement") : s.value("timed_on", ""), c.value("wall_seconds", 0.0), c.value("tokens", 0.0),
      c.value("dollars", 0.0));
  auto list = [&md](const json& items, const std::string& title, auto&& line) {
    md += fmt::format("\n## {} ({})\n\n", title, items.size());
    if (items.empty()) md += "None.\n";
    for (const json& it : items) md += "- " + line(it) + "\n";
  };
  list(s["excessive_speedups"], fmt::format("Speedups over {:g}x, to audit", kExcessiveSpeedup), [](const json& it) {
    return fmt::format("{}: {:.2f}x vs {}", it.value("problem", ""), it.value("speedup", 0.0), it.value("baseline", ""));
  });
  list(s["seed_aa"]["flagged"], "Problems whose seed is off 1x: their timings are suspect", [](const json& it) {
    return fmt::format("{}: seed {:.4f}x", it.value("problem", ""), it.value("seed_speedup", 0.0));
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
  md += "\n## Per problem\n\n| problem | correct | speedup (eager) | CI low | own share | seed |\n|---|---|---|---|---|---|\n";
  for (const json& p : s.value("per_problem", json::array()))
    md += fmt::format("| {} | {} | {} | {} | {} | {} |\n", p.value("problem", ""), p.value("correct", false) ? "yes" : "no",
                      number_or_dash(p["speedup"], "{:.3f}"), number_or_dash(p["ci_low"], "{:.3f}"),
                      number_or_dash(p["own_share"], "{:.2f}"), number_or_dash(p["seed_speedup"], "{:.4f}"));
  return md;
}

}  // namespace kmcts
