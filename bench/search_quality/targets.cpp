#include "search_quality/targets.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "common/bench_util.hpp"

namespace kmcts::bench {
namespace {

struct Row {
  std::string name;
  std::vector<int> reached;  // per seed, 0 = never
  MedianInterval stats;
  int hits = 0;
};

Row row_of(const std::string& name, const nlohmann::json& cell) {
  Row r{name, cell.at("evaluations_to_reach").get<std::vector<int>>(), {}, 0};
  std::vector<double> v;
  for (int n : r.reached) v.push_back(n > 0 ? n : std::numeric_limits<double>::infinity()), r.hits += n > 0;
  r.stats = median_interval(v);
  return r;
}

std::string show(double v, int budget) { return std::isinf(v) ? fmt::format(">{}", budget) : fmt::format("{:g}", v); }

// MCTS's median over the baseline's; where one of them is beyond the budget, the bound the
// budget gives ("<0.40": MCTS's 120 against a baseline beyond 300; ">1.20": the reverse against
// 250), and "-" where both are.
std::string ratio_cell(double mcts, double baseline, int budget) {
  if (std::isinf(mcts) && std::isinf(baseline)) return "-";
  // A bound rounded outwards, so that it still holds (the true ratio is above or below it).
  if (std::isinf(mcts)) return fmt::format(">{:.2f}", std::floor(budget / baseline * 100 + 1e-9) / 100);
  if (std::isinf(baseline)) return fmt::format("<{:.2f}", std::ceil(mcts / budget * 100 - 1e-9) / 100);
  return fmt::format("{:.2f}", mcts / baseline);
}

bool hard(const std::string& landscape) {
  return landscape == "rugged" || landscape.find("agent-sim") != std::string::npos;
}

}  // namespace

double sign_test_p(int wins, int losses) {
  const int n = wins + losses, k = std::min(wins, losses);
  if (n == 0) return 1;
  return std::min(1.0, 2 * binomial_half_cdf(static_cast<size_t>(n), static_cast<size_t>(k)));
}

std::string target_check(const nlohmann::json& result, const std::string& mcts, const std::vector<std::string>& order) {
  if (!result.contains("landscapes")) return "";
  std::vector<std::string> keys = order;
  if (keys.empty())
    for (const auto& [key, body] : result["landscapes"].items()) keys.push_back(key);
  const int budget = result.value("budget", 300);
  std::string table, verdicts;
  int met_median = 0, met_hard = 0, hard_total = 0, met_seeds = 0, total = 0, undecided = 0;
  for (const std::string& key : keys) {
    const auto& strategies = result["landscapes"].at(key).at("strategies");
    if (!strategies.contains(mcts)) return "";
    const Row m = row_of(mcts, strategies[mcts]);
    std::optional<Row> best;
    for (const auto& [name, cell] : strategies.items()) {
      if (name.rfind("mcts", 0) == 0) continue;
      Row r = row_of(name, cell);
      if (!best || r.stats.median < best->stats.median || (r.stats.median == best->stats.median && r.hits > best->hits))
        best = std::move(r);
    }
    if (!best) return "";
    int wins = 0, losses = 0;
    for (size_t s = 0; s < m.reached.size() && s < best->reached.size(); ++s) {
      const double a = m.reached[s] ? m.reached[s] : std::numeric_limits<double>::infinity();
      const double b = best->reached[s] ? best->reached[s] : std::numeric_limits<double>::infinity();
      wins += a < b, losses += a > b;
    }
    const int ties = static_cast<int>(m.reached.size()) - wins - losses;
    const bool both_inf = std::isinf(m.stats.median) && std::isinf(best->stats.median);
    // Neither median within the budget: the medians cannot be compared, so the target is
    // undecided there, counted neither met nor missed.
    const bool median_ok = !both_inf && m.stats.median <= best->stats.median;
    const bool seeds_ok = m.hits >= best->hits;
    ++total, met_median += median_ok, met_seeds += seeds_ok, undecided += both_inf;
    std::string hard_cell = "-";
    if (hard(key)) {
      ++hard_total;
      const bool ok = !both_inf && m.stats.median <= 0.7 * best->stats.median;
      met_hard += ok;
      hard_cell = ok ? "met" : "missed";
    }
    table += fmt::format("| {} | {} {} [{}, {}] ({}) | {} [{}, {}] ({}) | {} | {} / {} / {} (p = {:.2f}) | {} | {} | {} |\n",
                         key, best->name, show(best->stats.median, budget), show(best->stats.low, budget),
                         show(best->stats.high, budget), best->hits, show(m.stats.median, budget),
                         show(m.stats.low, budget), show(m.stats.high, budget), m.hits,
                         ratio_cell(m.stats.median, best->stats.median, budget), wins, ties, losses,
                         sign_test_p(wins, losses), both_inf ? "undecided" : median_ok ? "met" : "missed", hard_cell, seeds_ok ? "met" : "missed");
  }
  return fmt::format(
      "## Issue 29's targets: {} against the best baseline\n\n"
      "Best baseline: the non-MCTS strategy with the lowest median on the landscape (ties to more seeds reached). "
      "Median [95% interval] (seeds reached). Paired: seeds where {} needed fewer / as many / more evaluations than "
      "that baseline, with a two-sided sign test over the untied seeds. Targets: median no higher; at most 0.7x on "
      "the rugged and agent-simulated landscapes; as many seeds reached.\n\n"
      "| landscape | best baseline | {} | ratio | paired fewer / tied / more | median | 0.7x | seeds |\n"
      "|---|---|---|---|---|---|---|---|\n{}\n"
      "Met: median on {} of {} landscapes{}, 0.7x on {} of {}, seeds on {} of {}.\n\n",
      mcts, mcts, mcts, table, met_median, total,
      undecided > 0 ? fmt::format(" ({} undecided: neither median within the budget)", undecided) : std::string(),
      met_hard, hard_total, met_seeds, total);
}

}  // namespace kmcts::bench
