// UCT arithmetic with the numbers worked out by hand.
#include <doctest/doctest.h>

#include <cmath>

#include "search/policy.hpp"
#include "search/reward.hpp"

using namespace kmcts;

TEST_CASE("uct: Q + c*sqrt(ln N / n), pending visits only in the exploration term") {
  Config config;
  config.set("search.exploration=2");
  auto uct = PolicyRegistry::instance().create("policy", "uct", config);
  // Q = 3/4 = 0.75; exploration = 2*sqrt(ln 10 / 4) = 2*sqrt(0.575646) = 1.517427
  CHECK(uct->score({10, 0}, {3.0, 4, 0, 1}) == doctest::Approx(0.75 + 2 * std::sqrt(std::log(10.0) / 4)));
  // Two visits in flight through the child: n = 6 in the exploration term, Q unchanged.
  CHECK(uct->score({10, 2}, {3.0, 4, 2, 1}) == doctest::Approx(0.75 + 2 * std::sqrt(std::log(12.0) / 6)));
  // An unvisited child is tried first.
  CHECK(std::isinf(uct->score({10, 0}, {0, 0, 0, 1})));
  // A better mean wins at equal counts; more visits shrink the bonus.
  CHECK(uct->score({10, 0}, {2.0, 2, 0, 1}) > uct->score({10, 0}, {1.0, 2, 0, 1}));
  CHECK(uct->score({100, 0}, {5, 10, 0, 1}) < uct->score({100, 0}, {0.5, 1, 0, 1}));
}

TEST_CASE("log-speedup reward: log of the speedup, clipped; failures get the finite penalty") {
  Config config;
  config.set("search.reward_clip=1");
  config.set("search.failure_penalty=-0.5");
  auto reward = RewardRegistry::instance().create("reward", "log_speedup", config);
  EvalResult r;
  r.verdict = Verdict::ok;
  r.speedup = 2.0;
  CHECK(reward->of(r) == doctest::Approx(std::log(2.0)));
  r.speedup = 10.0;  // log 10 = 2.3 > clip
  CHECK(reward->of(r) == doctest::Approx(1.0));
  r.speedup = 0.5;
  CHECK(reward->of(r) == doctest::Approx(-std::log(2.0)));
  r.verdict = Verdict::wrong_answer;
  CHECK(reward->of(r) == doctest::Approx(-0.5));
}
