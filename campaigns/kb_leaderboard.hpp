#pragma once
// The leaderboard metrics of a KernelBench run over many problems, from the per-problem
// results (one JSON object each, as kb_runner.hpp writes them): correctness rate, fast_p
// against eager and torch.compile, geometric and arithmetic mean speedups over the correct
// problems, cost per problem, and the lists people must look at (excessive speedups, vacuous
// problems, failures).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kmcts {

/// fast_p thresholds reported (KernelBench's fast_0 is the correctness rate).
inline constexpr double kFastP[] = {0.0, 0.5, 0.8, 1.0, 1.5, 2.0};
/// A speedup above this is listed for audit.
inline constexpr double kExcessiveSpeedup = 10.0;

/// Fraction of all `problems` whose result is correct with speedup[baseline] > p; a problem
/// without a result or without that baseline counts as not fast.
double fast_p(const std::vector<nlohmann::json>& problems, const std::string& baseline, double p);

/// The summary: {"problems", "correct", "correct_fraction", "fast_p": {baseline: {"p": f}},
/// "geomean_speedup", "mean_speedup" (by baseline, null when no problem is correct),
/// "cost_per_problem", "totals", "excessive_speedups", "vacuous", "failed"}.
nlohmann::json leaderboard_summary(const std::vector<nlohmann::json>& problems);

/// The summary as a markdown report (tables, then the lists).
std::string leaderboard_markdown(const nlohmann::json& summary, const nlohmann::json& run);

}  // namespace kmcts
