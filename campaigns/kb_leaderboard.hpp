#pragma once
// The leaderboard metrics of a KernelBench run over many problems, from the per-problem
// results (one JSON object each, as kb_runner.hpp writes them): correctness rate, fast_p
// against eager and torch.compile (also restricted to candidates whose own kernels do the work),
// the seeds' A/A check, geometric and arithmetic mean speedups over the correct
// problems, cost per problem, and the lists people must look at (excessive speedups, vacuous
// problems, failures).
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kmcts {

/// fast_p thresholds reported (KernelBench's fast_0 is the correctness rate).
inline constexpr double kFastP[] = {0.0, 0.5, 0.8, 1.0, 1.5, 2.0};
/// A speedup above this is listed for audit.
inline constexpr double kExcessiveSpeedup = 10.0;
/// "Faster than p" (p >= 1) needs the speedup interval's lower bound above p x (1 + this), as a
/// CUDA problem's "faster" call does (timing_math.hpp's minimum margin).
inline constexpr double kFasterMargin = 0.01;
/// A seed (the reference itself) measured outside 1 +- this flags its problem's timings.
inline constexpr double kSeedAaTolerance = 0.005;

struct LeaderboardOptions {
  double own_share_threshold = 0.9;  // fast_p_own: candidates with at least this own-kernel share
};

/// Fraction of all `problems` whose result is correct and faster than p against `baseline`; a
/// problem without a result or without that baseline counts as not fast. `confident`: for
/// p >= 1 the speedup's interval must clear p by kFasterMargin (where there is an interval);
/// otherwise the point estimate > p (KernelBench's count). `min_own_share`: only candidates
/// whose measured own-kernel share is at least this count (no share measured: not counted).
double fast_p(const std::vector<nlohmann::json>& problems, const std::string& baseline, double p,
              bool confident = true, std::optional<double> min_own_share = std::nullopt);

/// The summary: {"problems", "correct", "correct_fraction", "fast_p": {baseline: {"p": f}}
/// (confident), "fast_p_point" (KernelBench's point-estimate count), "fast_p_own" (confident,
/// own share >= threshold), "own_share" (over the correct problems), "seed_aa" (the seeds'
/// speedups: an A/A check, "flagged" outside kSeedAaTolerance), "geomean_speedup",
/// "mean_speedup" (by baseline, null when no problem is correct), "cost_per_problem", "totals",
/// "per_problem", "excessive_speedups", "vacuous", "failed"}.
nlohmann::json leaderboard_summary(const std::vector<nlohmann::json>& problems, const LeaderboardOptions& options = {});

/// The summary as a markdown report (tables, then the lists).
std::string leaderboard_markdown(const nlohmann::json& summary, const nlohmann::json& run);

}  // namespace kmcts
