// Rank-based reward: how a variant's speedup ranks among the variants evaluated before it,
// mapped to [-1, 1]. Scale-free: a 1.05x gain on a problem where everything is within 2%
// counts like a 3x gain on one with a wide spread, so one exploration constant serves a
// whole benchmark of problems. The rank is taken when the result is applied and kept, so a
// node's reward never changes afterwards (backups stay idempotent).
#include <algorithm>
#include <vector>

#include "search/reward.hpp"

namespace kmcts {
namespace {

class RankReward final : public Reward {
 public:
  explicit RankReward(double penalty) : penalty_(penalty) {}
  double of(const EvalResult& r) override {
    if (!r.ok() || !(r.speedup > 0)) return penalty_;
    double reward = 0;  // the first successful variant is the median of what is known
    if (!seen_.empty()) {
      auto below = std::lower_bound(seen_.begin(), seen_.end(), r.speedup) - seen_.begin();
      auto equal = std::upper_bound(seen_.begin(), seen_.end(), r.speedup) - seen_.begin() - below;
      double percentile = (static_cast<double>(below) + 0.5 * static_cast<double>(equal)) / static_cast<double>(seen_.size());
      reward = 2 * percentile - 1;
    }
    seen_.insert(std::upper_bound(seen_.begin(), seen_.end(), r.speedup), r.speedup);
    return reward;
  }

 private:
  double penalty_;
  std::vector<double> seen_;  // sorted speedups of earlier successful variants
};

}  // namespace

KMCTS_REGISTER(RewardRegistry, "rank", [](const Config& c) -> std::unique_ptr<Reward> {
  return std::make_unique<RankReward>(c.get_double("search.failure_penalty"));
})

}  // namespace kmcts
