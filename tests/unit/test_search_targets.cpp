// The search-quality benchmark's check of issue 29's targets (bench/search_quality/targets.hpp).
#include <doctest/doctest.h>

#include "search_quality/targets.hpp"

using namespace kmcts::bench;

namespace {

nlohmann::json cell(std::vector<int> reached) { return {{"evaluations_to_reach", reached}}; }

}  // namespace

TEST_CASE("sign test: two-sided, ties dropped by the caller") {
  CHECK(sign_test_p(0, 0) == 1.0);
  CHECK(sign_test_p(5, 5) == 1.0);
  CHECK(sign_test_p(10, 0) == doctest::Approx(2.0 / 1024));
  CHECK(sign_test_p(0, 10) == doctest::Approx(2.0 / 1024));
  CHECK(sign_test_p(8, 2) == doctest::Approx(2 * 56.0 / 1024));  // P(X <= 2), X ~ Bin(10, 1/2): 56/1024
}

TEST_CASE("issue 29 targets: the best baseline per landscape, paired seeds, each target met or missed") {
  nlohmann::json r = {{"budget", 300}};
  // smooth: MCTS 20 vs linear 30 and beam 25 -> best baseline beam, median met, 5 of 5 paired wins.
  r["landscapes"]["smooth"]["strategies"] = {{"mcts/uct", cell({20, 20, 20, 20, 20})},
                                             {"linear", cell({30, 30, 30, 30, 30})},
                                             {"beam", cell({25, 25, 25, 25, 25})}};
  // rugged: MCTS 80 vs beam 100: met the median, missed 0.7x (80 > 70); fewer seeds reached.
  r["landscapes"]["rugged"]["strategies"] = {{"mcts/uct", cell({80, 80, 80, 0, 0})},
                                             {"mcts/puct", cell({1, 1, 1, 1, 1})},  // never a baseline
                                             {"beam", cell({100, 100, 100, 100, 0})}};
  // agent-sim: neither median within the budget: no ratio, the median target undecided (counted
  // neither met nor missed), 0.7x missed.
  r["landscapes"]["agent-sim"]["strategies"] = {{"mcts/uct", cell({50, 0, 0, 0, 0})},
                                                {"linear", cell({0, 0, 0, 60, 0})}};
  // conv: MCTS's median beyond the budget, the baseline's 250: the ratio is above 300 / 250.
  r["landscapes"]["conv"]["strategies"] = {{"mcts/uct", cell({0, 0, 0, 250, 0})}, {"beam", cell({250, 250, 250, 0, 0})}};
  // layer: the reverse, MCTS 121 against a baseline beyond the budget: below 121 / 300 = 0.403,
  // rounded up so that the bound holds.
  r["landscapes"]["layer"]["strategies"] = {{"mcts/uct", cell({121, 121, 121, 0, 0})}, {"beam", cell({0, 0, 0, 0, 90})}};
  const std::string md = target_check(r, "mcts/uct", {"smooth", "rugged", "agent-sim", "conv", "layer"});
  INFO(md);
  CHECK(md.find("| smooth | beam 25 [25, 25] (5) | 20 [20, 20] (5) | 0.80 | 5 / 0 / 0 (p = 0.06) | met | - | met |") !=
        std::string::npos);
  CHECK(md.find("| rugged | beam 100 [100, >300] (4) | 80 [80, >300] (3) | 0.80 | 3 / 1 / 1 (p = 0.63) | met | missed | "
                "missed |") != std::string::npos);
  CHECK(md.find("| agent-sim | linear >300 [60, >300] (1) | >300 [50, >300] (1) | - | 1 / 3 / 1 (p = 1.00) | undecided | "
                "missed | met |") != std::string::npos);
  CHECK(md.find("| conv | beam 250 [250, >300] (3) | >300 [250, >300] (1) | >1.20 | 1 / 1 / 3 (p = 0.63) | missed | - | "
                "missed |") != std::string::npos);
  CHECK(md.find("| layer | beam >300 [90, >300] (1) | 121 [121, >300] (3) | <0.41 | 3 / 1 / 1 (p = 0.63) | met | - | met |") !=
        std::string::npos);
  CHECK(md.find("inf") == std::string::npos);
  CHECK(md.find("Met: median on 3 of 5 landscapes (1 undecided: neither median within the budget), 0.7x on 0 of 2, "
                "seeds on 3 of 5.") != std::string::npos);
  CHECK(md.find("| smooth") < md.find("| rugged"));  // in the order given, not the JSON's
  CHECK(md.find("| rugged") < md.find("| agent-sim"));
  CHECK(target_check(r, "mcts/thompson", {}).empty());  // not in the result
}
