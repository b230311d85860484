#pragma once
// Turns an evaluation into the scalar MCTS backs up. Registered by name.
#include "core/eval_result.hpp"
#include "core/options.hpp"
#include "core/registry.hpp"

namespace kmcts {

class Reward {
 public:
  virtual ~Reward() = default;
  virtual double of(const EvalResult& result) const = 0;
};

using RewardRegistry = Registry<Reward, const Config&>;

}  // namespace kmcts
