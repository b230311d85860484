#pragma once
// Where an MCTS descent stops to expand a node (search.expansion, issue 29). Registered by name:
//   first_open - the first node on the descent's path with room for a child (the classic rule);
//   compare    - at a node with room, expanding it competes in the policy's choice with its
//                children, as a virtual child valued at the node's own reward with one visit;
//   adaptive   - as compare, but the virtual child is a generation arm that learns: valued at
//                the mean of the node's own reward and the rewards of every child generated from
//                it, failures included, with that many visits. With a wide search.branching the
//                tree's width then follows what generation has paid at each node (AB-MCTS).
#include <utility>

#include "core/options.hpp"
#include "core/registry.hpp"
#include "search/variant_graph.hpp"

namespace kmcts {

class ExpansionRule {
 public:
  virtual ~ExpansionRule() = default;
  /// false: a descent expands the first node on its path with room, without a choice.
  virtual bool competes() const = 0;
  /// The virtual child's value and visits at `node`, a node with room (where competes()).
  virtual std::pair<double, int> generation_arm(const VariantGraph& graph, int node) const = 0;
};

using ExpansionRuleRegistry = Registry<ExpansionRule, const Config&>;

}  // namespace kmcts
