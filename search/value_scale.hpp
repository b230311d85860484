#pragma once
// How the values of the children a descent compares are put on a common scale before the
// selection policy sees them. Registered by name:
//   none     - as backed up (a log-speedup reward: the exploration constants are set on that scale);
//   siblings - min-max over the children compared (the virtual "expand here" child included):
//              the best gets 1, the worst 0, all 0.5 when they are equal. The exploration term
//              is then measured against the spread of the children's values, so one constant
//              serves a landscape of 1.05x steps and one of 20x (MuZero normalises Q by the
//              tree's min and max to the same end);
//   tree     - min-max over every reward measured in the search so far (MuZero's normalisation):
//              a child's value says where it stands in all the search has seen, not among its
//              siblings only, so a node whose children are all poor is not made to look as
//              promising as one whose children are all good. Before two distinct rewards are
//              known, every value is 0.5.
#include <vector>

#include "core/options.hpp"
#include "core/registry.hpp"
#include "search/selection_policy.hpp"

namespace kmcts {

/// The lowest and highest reward measured in the search so far.
struct ValueRange {
  double lo = 0, hi = 0;
  bool seen = false;
  void add(double v) {
    if (!seen || v < lo) lo = v;
    if (!seen || v > hi) hi = v;
    seen = true;
  }
};

class ValueScale {
 public:
  virtual ~ValueScale() = default;
  /// Rescales the q of every child in place; `tree` is what the search has measured so far.
  virtual void apply(std::vector<ChildStats>& children, const ValueRange& tree) const = 0;
};

using ValueScaleRegistry = Registry<ValueScale, const Config&>;

}  // namespace kmcts
