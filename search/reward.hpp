#pragma once
// Turns an evaluation into the scalar MCTS backs up. Registered by name.
#include "core/eval_result.hpp"
#include "core/options.hpp"
#include "core/registry.hpp"

namespace kmcts {

class Reward {
 public:
  virtual ~Reward() = default;
  /// Called once per evaluation, in the order results are applied (a reward may keep history).
  virtual double of(const EvalResult& result) = 0;
};

using RewardRegistry = Registry<Reward, const Config&>;

}  // namespace kmcts
