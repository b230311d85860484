#pragma once
// Whether an MCTS selection refines the incumbent (expands the fastest measured node with room,
// as the greedy baselines do) or is the policy's descent (search.refine, issue 29). Registered
// by name:
//   off    - every selection is a descent;
//   bandit - a two-armed bandit chooses before each selection (search/refine_bandit.hpp).
#include "core/options.hpp"
#include "core/registry.hpp"
#include "core/rng.hpp"

namespace kmcts {

class Refinement {
 public:
  enum Arm { refine = 0, descend = 1 };
  virtual ~Refinement() = default;
  /// false: every selection is a descent, and the search keeps no outcomes for it.
  virtual bool active() const = 0;
  /// The arm of the next selection.
  virtual Arm choose(CounterRng& rng) const = 0;
  /// An outcome: the arm's expansion made a child that beat the best measured so far, or not.
  virtual void update(Arm arm, bool success) = 0;
};

using RefinementRegistry = Registry<Refinement, const Config&>;

}  // namespace kmcts
