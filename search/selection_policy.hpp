#pragma once
// A selection policy picks which child of a node MCTS descends into. Registered by name:
// uct, puct (uses the Planner's priors), thompson (samples the reward posterior),
// egreedy. The statistics it sees were already adjusted for work in flight by a
// PendingTreatment (pending.hpp), so policies stay oblivious of parallelism.
#include <vector>

#include "core/options.hpp"
#include "core/registry.hpp"
#include "core/rng.hpp"

namespace kmcts {

struct ParentStats {
  double visits = 0;  // effective N of the parent (pending work included as the treatment says)
};

struct ChildStats {
  double q = 0;       // effective value of the child
  double visits = 0;  // effective visit count of the edge into the child (exploration term)
  double prior = 1;   // normalised over the siblings (sums to 1)
};

class SelectionPolicy {
 public:
  virtual ~SelectionPolicy() = default;
  /// Index of the chosen child; `children` is not empty. Ties go to the lowest index.
  virtual size_t choose(const ParentStats& parent, const std::vector<ChildStats>& children, CounterRng& rng) const = 0;
};

/// A policy that picks the child with the highest score.
class ScoringPolicy : public SelectionPolicy {
 public:
  virtual double score(const ParentStats& parent, const ChildStats& child, CounterRng& rng) const = 0;
  size_t choose(const ParentStats& parent, const std::vector<ChildStats>& children, CounterRng& rng) const override;

 protected:
  /// The index of the highest score(child), each scored once in order; ties go to the first.
  template <class Score>
  static size_t first_best(const std::vector<ChildStats>& children, Score score) {
    size_t best = 0;
    double best_score = 0;
    for (size_t i = 0; i < children.size(); ++i) {
      const double s = score(children[i]);
      if (i == 0 || s > best_score) best = i, best_score = s;
    }
    return best;
  }
};

using SelectionPolicyRegistry = Registry<SelectionPolicy, const Config&>;

}  // namespace kmcts
