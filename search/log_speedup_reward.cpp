// log(speedup) is symmetric (2x faster and 2x slower are +-0.69) and additive over
// successive improvements, so mean backup averages ratios geometrically.
#include <algorithm>
#include <cmath>

#include "search/reward.hpp"

KMCTS_OPTION("search.reward_clip", Double, 10.0, 0.1, 20.0,
             "Clip log-speedup rewards to [-clip, clip]; 10 = a 22026x change. The old 3 (20x) made every variant "
             "above 20x look alike to the search (bench/results/search-study.md).")
KMCTS_OPTION("search.failure_penalty", Double, -1.0, -20.0, 0.0,
             "Reward of a variant that fails to compile, is wrong, crashes or times out. Finite, "
             "so a branch with one failure is discouraged, not killed (-1 ~ a 2.7x slowdown).")

namespace kmcts {
namespace {

class LogSpeedupReward final : public Reward {
 public:
  LogSpeedupReward(double clip, double penalty) : clip_(clip), penalty_(penalty) {}
  double of(const EvalResult& r) override {
    if (!r.ok() || !(r.speedup > 0)) return penalty_;
    return std::clamp(std::log(r.speedup), -clip_, clip_);
  }

 private:
  double clip_;
  double penalty_;
};

}  // namespace

KMCTS_REGISTER(RewardRegistry, "log_speedup", [](const Config& c) -> std::unique_ptr<Reward> {
  return std::make_unique<LogSpeedupReward>(c.get_double("search.reward_clip"), c.get_double("search.failure_penalty"));
})

}  // namespace kmcts
