#pragma once
// Adaptive greediness for MCTS (search.refine=bandit, registered as a Refinement, issue 29): before each selection a
// two-armed bandit decides between refining the incumbent (expanding the fastest measured node
// that has room, as the greedy baselines do) and the tree policy's descent. An arm's success is
// an expansion whose child beat the best measured so far; its failures are children that did
// not (failed, slower, or a variant already in the graph). Thompson sampling over Beta
// posteriors whose counts decay by `discount` at each update of that arm, so the bandit follows
// the search: refinement while it pays, the tree's breadth once the incumbent's neighbourhood
// stops paying (a local optimum), refinement again when a descent finds a better region.
#include "core/rng.hpp"
#include "search/refinement.hpp"

namespace kmcts {

class RefineBandit final : public Refinement {
 public:
  /// `refine_prior`: pseudo-successes the refine arm starts with (0 = even odds), decayed like
  /// any other count, so the search starts greedy and the evidence takes over.
  explicit RefineBandit(double discount, double refine_prior = 0) : discount_(discount) { wins_[refine] = refine_prior; }
  /// A Thompson draw: the arm whose sampled success rate is higher (ties: refine).
  bool active() const override { return true; }
  Arm choose(CounterRng& rng) const override;
  void update(Arm arm, bool success) override;
  double successes(Arm arm) const { return wins_[arm]; }
  double failures(Arm arm) const { return losses_[arm]; }

 private:
  double discount_;
  double wins_[2] = {0, 0}, losses_[2] = {0, 0};
};

}  // namespace kmcts
