#pragma once
// Greedy refinement chains for MCTS (search.chain, issue 29): once an expansion's child is
// measured, whether that child is expanded next, directly, without a descent, up to
// search.chain_length steps in a row (0 = no chains). A chain's results are backed up along its
// path like any other, so with max backup the chain's best reaches every node above it.
// Registered by name:
//   improving - the child beat the node it was expanded from (a local hill climb);
//   record    - the child beat the best reward measured before it (a chain runs only while it
//               sets records, so it follows the incumbent and nothing else).
#include <optional>

#include "core/options.hpp"
#include "core/registry.hpp"

namespace kmcts {

class ChainRule {
 public:
  virtual ~ChainRule() = default;
  /// Whether the child (reward `child`) of an expansion of a node (reward `node`) is expanded
  /// next; `best_before`: the best reward measured before the child's (none: the child is the
  /// first).
  virtual bool continues(double node, double child, std::optional<double> best_before) const = 0;
};

using ChainRuleRegistry = Registry<ChainRule, const Config&>;

}  // namespace kmcts
