// Epsilon-greedy tree search, the shape of the tree-search agents in the literature (AIDE
// and its successors): draft a few solutions from the seed, then mostly improve the best
// one, sometimes another. Rules for each job, in order:
//  1. A failed variant waiting for repair is repaired first (search.debug_attempts per
//     lineage, as in MCTS).
//  2. Candidates: ok nodes that still have room for children, that is fewer than
//     search.egreedy.root_cap expand children for the seed kernel and search.branching
//     for any other node (expansions in flight count; a node whose Planner ran dry is
//     closed), and that are not pruned.
//  3. With probability search.egreedy.epsilon expand a candidate drawn uniformly, else the
//     fastest candidate (ties to the oldest). One uniform draw decides, a second picks the
//     node; both come from (search.seed, "egreedy_tree", job number).
// Pruning: once a node has search.egreedy.prune_after failed expand children and no ok
// child, it is never expanded again, even if a later child succeeds: a branch that keeps
// producing broken code is dead, and spending more budget there is what pruning avoids.
// Rewards are backed up along each node's tree path (root .. node), as MCTS does.
#include <algorithm>
#include <set>

#include "search/strategy_support.hpp"

KMCTS_OPTION("search.egreedy.epsilon", Double, 0.2, 0.0, 1.0,
             "egreedy_tree strategy: probability of expanding a random candidate instead of the "
             "fastest. 0.2 spends one job in five exploring: enough to leave a local optimum on a "
             "40-evaluation budget without diluting the greedy refinement.")
KMCTS_OPTION("search.egreedy.root_cap", Int, 5, 1, 64,
             "egreedy_tree strategy: most expand children of the seed kernel (the initial drafts). "
             "5 matches the number of initial drafts AIDE-style agents make.")
KMCTS_OPTION("search.egreedy.prune_after", Int, 3, 1, 64,
             "egreedy_tree strategy: failed expand children, with no ok child, after which a node is "
             "never expanded again. 3 tolerates an unlucky failure or two (the Debugger repairs "
             "those) but stops feeding a branch whose code keeps breaking.")

namespace kmcts {
namespace {

class EgreedyTreeStrategy final : public LedgerStrategy {
 public:
  struct Settings {
    double epsilon = 0.2;
    int root_cap = 5;
    int prune_after = 3;
  };
  EgreedyTreeStrategy(CommonStrategySettings common, Settings settings)
      : LedgerStrategy(common.debug_attempts, 2 * std::max(common.branching, settings.root_cap)),
        common_(common),
        settings_(settings) {}

  std::optional<Selection> next(VariantGraph& graph) override {
    if (auto repair = ledger_.start_debug(graph)) return repair;
    auto open = ok_nodes_where(graph, [&](int n) {
      return !pruned_.count(n) && ledger_.has_capacity(graph, n, n == 0 ? settings_.root_cap : common_.branching);
    });
    if (open.empty()) return std::nullopt;
    CounterRng rng = job_rng(common_.seed, "egreedy_tree", jobs_++);
    bool explore = rng.uniform() < settings_.epsilon;
    int node = explore ? open[rng.below(open.size())] : fastest(graph, open);
    return ledger_.start_expand(graph.tree_path(node));
  }

  void on_child(VariantGraph& graph, const Selection& s, int child, bool awaiting_evaluation) override {
    LedgerStrategy::on_child(graph, s, child, awaiting_evaluation);
    if (!awaiting_evaluation) update_pruning(graph, child);  // a known failed node can count too
  }

  void on_evaluated(VariantGraph& graph, const Selection& s, int node, double reward) override {
    LedgerStrategy::on_evaluated(graph, s, node, reward);
    update_pruning(graph, node);
  }

 private:
  // `node`'s status is known now: check each parent it is an expand child of.
  void update_pruning(const VariantGraph& graph, int node) {
    for (int p : graph.parents(node)) {
      if (graph.edge(p, node)->kind != EdgeKind::expand || pruned_.count(p)) continue;
      int failed = 0, ok = 0;
      for (int c : graph.children(p)) {
        if (graph.edge(p, c)->kind != EdgeKind::expand) continue;
        failed += graph.node(c).status == NodeStatus::failed;
        ok += graph.node(c).status == NodeStatus::ok;
      }
      if (ok == 0 && failed >= settings_.prune_after) pruned_.insert(p);
    }
  }

  CommonStrategySettings common_;
  Settings settings_;
  std::set<int> pruned_;
  uint64_t jobs_ = 0;  // names each draw: (seed, "egreedy_tree", job number)
};

}  // namespace
}  // namespace kmcts

KMCTS_REGISTER(kmcts::StrategyRegistry, "egreedy_tree", [](const kmcts::Config& c) -> std::unique_ptr<kmcts::Strategy> {
  kmcts::EgreedyTreeStrategy::Settings s;
  s.epsilon = c.get_double("search.egreedy.epsilon");
  s.root_cap = static_cast<int>(c.get_int("search.egreedy.root_cap"));
  s.prune_after = static_cast<int>(c.get_int("search.egreedy.prune_after"));
  return std::make_unique<kmcts::EgreedyTreeStrategy>(kmcts::CommonStrategySettings::from_config(c), s);
})
