// Rewards with the numbers worked out by hand.
#include <doctest/doctest.h>

#include <cmath>

#include "search/reward.hpp"

using namespace kmcts;

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

TEST_CASE("rank reward: percentile among earlier successes, mapped to [-1, 1]") {
  Config config;
  config.set("search.failure_penalty=-2");
  auto reward = RewardRegistry::instance().create("reward", "rank", config);
  auto ok = [](double speedup) {
    EvalResult r;
    r.verdict = Verdict::ok;
    r.speedup = speedup;
    return r;
  };
  CHECK(reward->of(ok(1.0)) == doctest::Approx(0.0));   // nothing to compare with
  CHECK(reward->of(ok(2.0)) == doctest::Approx(1.0));   // beats 1 of 1
  CHECK(reward->of(ok(0.5)) == doctest::Approx(-1.0));  // beats 0 of 2
  CHECK(reward->of(ok(1.0)) == doctest::Approx(0.0));   // {0.5, 1.0, 2.0}: 1 below, 1 equal -> 1.5/3
  EvalResult failed;
  failed.verdict = Verdict::crash;
  CHECK(reward->of(failed) == doctest::Approx(-2.0));
  CHECK(reward->of(ok(1.01)) == doctest::Approx(2 * (3.0 / 4) - 1));  // beats 0.5, 1.0, 1.0 of 4
}
