#pragma once
// Where an MCTS descent stops to expand a node (search.expansion, issue 29). Registered by name:
//   first_open - the first node on the descent's path with room for a child (the classic rule);
//   compare    - at a node with room, expanding it competes in the policy's choice with its
//                children, as a virtual child valued at the node's own reward with one visit;
//   adaptive   - as compare, but the virtual child is a generation arm that learns: valued at
//                the mean of the node's own reward and the rewards of every child generated from
//                it, failures included, with that many visits. With a wide search.branching the
//                tree's width then follows what generation has paid at each node (AB-MCTS);
//   thompson   - the rule chooses itself, before the policy (AB-MCTS-A, Inoue et al. 2025, with
//                the Planner's priors): a Thompson draw between generating at the node (GEN) and
//                descending into its children (CONT), each a Beta posterior over scores scaled to
//                [0, 1] by the lowest and highest reward measured. GEN's observations are the
//                children generated there (failures score 0), CONT's the visits of those children
//                after their own evaluation; GEN's prior is search.expansion_prior pseudo-scores
//                at the node's own score, its odds multiplied by the Planner's preference for the
//                plan the next generation will take (NodeRecord::next_plan_share, to the power
//                search.expansion_planner: 0 ignores the Planner). When CONT wins,
//                the selection policy chooses among the children. Generations in flight count
//                in neither arm (no virtual loss), so parallel workers may all generate at one
//                node until it is full; refinements and chain steps below a node count as CONT
//                visits of its children like any descent.
#include <optional>
#include <utility>

#include "core/options.hpp"
#include "core/registry.hpp"
#include "core/rng.hpp"
#include "search/value_scale.hpp"
#include "search/variant_graph.hpp"

namespace kmcts {

class ExpansionRule {
 public:
  virtual ~ExpansionRule() = default;
  /// false: a descent expands the first node on its path with room, without a choice.
  virtual bool competes() const = 0;
  /// The virtual child's value and visits at `node`, a node with room (where competes()).
  virtual std::pair<double, int> generation_arm(const VariantGraph& graph, int node) const = 0;
  /// A rule that makes the choice itself, at `node` (a node with room and children a descent
  /// may enter): true = expand it, false = descend (the policy then chooses among the children,
  /// without the virtual child). nullopt (the default): the policy chooses, the virtual child
  /// competing. `tree`: every reward measured so far.
  virtual std::optional<bool> generate(const VariantGraph&, int /*node*/, const ValueRange& /*tree*/, CounterRng&) const {
    return std::nullopt;
  }
};

using ExpansionRuleRegistry = Registry<ExpansionRule, const Config&>;

}  // namespace kmcts
