#pragma once
// Issue 29's targets, checked on a search-quality result: the default MCTS against the best
// baseline of each landscape (the non-MCTS strategy with the lowest median, ties to more seeds
// reached). Per landscape: both medians with their intervals, seeds reached, the paired
// comparison over seeds (the same seed is the same landscape and search seed for both) with a
// two-sided sign test, and whether each target holds:
//   - no more median evaluations than the best baseline;
//   - on the rugged and agent-simulated landscapes, at most 0.7 times as many;
//   - at least as many seeds reached.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kmcts::bench {

/// The markdown section, or "" when `mcts` or every baseline is missing from `result`.
/// `result["landscapes"][key]["strategies"][name]["evaluations_to_reach"]`: per seed, 0 = never.
/// `order`: the landscapes' keys in the order of the rows (empty: the JSON's order).
std::string target_check(const nlohmann::json& result, const std::string& mcts, const std::vector<std::string>& order);

/// Two-sided sign test over paired outcomes (ties dropped): P(as extreme | p = 1/2).
double sign_test_p(int wins, int losses);

}  // namespace kmcts::bench
