#pragma once
// Monte Carlo tree search over the variant graph, assembled from swappable parts chosen by
// name in the config: a SelectionPolicy (uct, puct, thompson, egreedy), a PendingTreatment
// for work in flight (wu_uct, virtual_loss, none), a Widening (fixed, progressive), a Backup
// (mean, max, power_mean), a ValueScale (none, siblings, tree), an ExpansionRule (first_open,
// compare, adaptive, thompson), an ExplorationSchedule (constant, linear), a Refinement of the
// incumbent (off, bandit) and a ChainRule for greedy refinement chains (improving, record; their
// length is search.chain_length, 0 = none). Transpositions are handled soundly: edges carry
// their own visit counts, and a node's statistics are recomputed from its own reward and its
// children's values (N(node) = 1 + sum of its edges' visits) instead of accumulated, so a
// child reached from several parents is never double-counted. Failed variants are leaves
// queued for the Debugger (JobLedger).
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <unordered_map>
#include <vector>

#include "search/backup.hpp"
#include "search/chain_rule.hpp"
#include "search/pending.hpp"
#include "search/expansion_rule.hpp"
#include "search/exploration_schedule.hpp"
#include "search/refinement.hpp"
#include "search/selection_policy.hpp"
#include "search/strategy.hpp"
#include "search/strategy_support.hpp"
#include "search/value_scale.hpp"
#include "search/widening.hpp"

namespace kmcts {

class MctsStrategy final : public LedgerStrategy {
 public:
  struct Parts {
    std::unique_ptr<SelectionPolicy> policy;
    std::unique_ptr<PendingTreatment> pending;
    std::unique_ptr<Widening> widening;
    std::unique_ptr<Backup> backup;
    std::unique_ptr<ValueScale> value_scale;
    std::unique_ptr<ExpansionRule> expansion;            // search.expansion
    std::unique_ptr<ExplorationSchedule> exploration;    // search.exploration_schedule
    std::unique_ptr<Refinement> refinement;              // search.refine
    std::unique_ptr<ChainRule> chain;                    // search.chain
    int chain_length = 0;            // search.chain_length (0 = no greedy refinement chains)
    int reroot_depth = 64;           // search.reroot_depth (0 = descents start at the seed)
    bool reroot_repairs = true;      // search.reroot_repairs
    /// false: every descent decides selectability from scratch for every node it asks about
    /// (the reference the tests hold the kept flags against; the same selections either way).
    bool keep_selectability = true;
    static Parts from_config(const Config& c);
  };
  MctsStrategy(CommonStrategySettings settings, Parts parts);

  std::optional<Selection> next(VariantGraph& graph) override;
  void on_expansion_failed(VariantGraph& graph, const Selection& s, bool exhausted) override;
  void on_child(VariantGraph& graph, const Selection& s, int child, bool awaiting_evaluation) override;
  void on_evaluated(VariantGraph& graph, const Selection& s, int node, double reward) override;

  /// Expand children plus expansions in flight, against the widening's limit for the node.
  bool has_capacity(const VariantGraph& graph, int node) const;
  /// Recomputes visits and value of every evaluated node on `path`, leaf first.
  void recompute(VariantGraph& graph, const std::vector<int>& path) const;

 private:
  /// A job's `sample` along `path`, as the ledger's mean backup then recompute() would leave
  /// it, with the edges counted inside recompute() (no lookup per edge); none: recompute() only.
  void back_up(VariantGraph& graph, const std::vector<int>& path, std::optional<double> sample) const;
  /// recompute(), counting each edge of the walk as its node's children are read (a path
  /// that visits no node twice).
  void recompute(VariantGraph& graph, const std::vector<int>& path, bool count_walk_too) const;
  /// Whether a descent may pass through `node` at all: an ok node, or a failed one, whose
  /// children are the Debugger's repairs (they are reachable only through it). A failed node
  /// is never expanded itself.
  static bool enterable(const VariantGraph& graph, int node) { return graph.node(node).status != NodeStatus::pending; }
  /// Whether a descent may enter `node`: the kept flag where it holds, else searched.
  bool selectable(const VariantGraph& graph, int node) const {
    if (parts_.keep_selectability && !graph.reaches_cycle(node) && enterable(graph, node))
      return static_cast<size_t>(node) < selectable_.size() && selectable_[static_cast<size_t>(node)];
    return search_selectable(graph, node);
  }
  /// Searches below `node` (memoised per descent): for nodes that reach a cycle, and the
  /// reference the tests hold the kept flags against.
  bool search_selectable(const VariantGraph& graph, int node) const;
  /// Whether a descent below a re-rooted start may enter `node`: it is open, or an enterable
  /// child made from it (its tree child) is. The lineage tree has no cycle, so the kept flag
  /// always holds; without keep_selectability it is searched.
  bool tree_selectable(const VariantGraph& graph, int node) const;
  /// Whether `node` itself is open: ok, with room for one more child.
  bool open(const VariantGraph& graph, int node) const {
    return graph.node(node).status == NodeStatus::ok && has_capacity(graph, node);
  }
  /// Recomputes the kept flags of `node` after its state changed: refresh_graph() and
  /// refresh_tree().
  void refresh(const VariantGraph& graph, int node) {
    refresh_tree(graph, node);
    refresh_graph(graph, node);
  }
  /// Recomputes the kept flag of `node` (ok, and room in it or in an ok child's subtree) from
  /// its own state and its children's flags; a change goes on to its parents. Nodes that
  /// reach a cycle keep none (see selectable()).
  void refresh_graph(const VariantGraph& graph, int node);
  /// The same for the lineage tree's flag (tree_selectable()), going up its tree parents.
  void refresh_tree(const VariantGraph& graph, int node);
  /// refresh() of the nodes on `path` a job's end changed, leaf first: the last two (the job's
  /// node and its new or evaluated child), and every other one where the widening reads the
  /// visits the backup changed.
  void refresh_path(const VariantGraph& graph, const std::vector<int>& path);
  /// The chosen child, or -1 when `with_virtual` and expanding `node` itself won.
  int choose_child(const VariantGraph& graph, int node, const std::vector<std::pair<int, const EdgeRecord*>>& candidates, CounterRng& rng,
                   bool with_virtual = false) const;

  /// The next chain step, if one is waiting and still possible: its selection, else nullopt.
  std::optional<Selection> next_chain_step(VariantGraph& graph);
  /// search.refine=bandit: the incumbent's expansion when the bandit draws refinement and a
  /// measured node has room (the fastest such, ties to the oldest), else nullopt (a descent).
  std::optional<Selection> next_refinement(VariantGraph& graph, CounterRng& rng);
  /// The bandit's bookkeeping of an expansion's outcome (a new node's reward, or none: a
  /// transposition), and the incumbents' queue.
  void note_outcome(const VariantGraph& graph, const Selection& s, int node, std::optional<double> reward);
  /// search.reroot_depth: where a path to `node` (about to be expanded, or a new best) starts:
  /// where descents start, when `node` lies at most the limit below it; else `node`'s ancestor
  /// half the limit up (the seed for a shallow node elsewhere). Descents move there.
  int start_for(const VariantGraph& graph, int node) const;

  CommonStrategySettings settings_;
  Parts parts_;
  uint64_t selections_ = 0;  // keys the draws of each selection
  // Greedy refinement chains (search.chain_length, search.chain): children the chain rule let
  // go on (by default: they improved on the node they were expanded from), waiting to be
  // expanded next, with their path and the chain's length so far; and, per node a chain step
  // expanded, that length.
  std::deque<std::pair<std::vector<int>, int>> chain_heads_;
  std::unordered_map<int, int> chain_step_of_;
  ValueRange measured_;  // every reward measured so far (search.value_scale=tree)
  // An active search.refine: measured ok nodes by reward (best first, ties to the oldest; nodes
  // without room are dropped as they come to the top), and the arm that chose each expansion
  // in flight, by the node it expands. The best reward so far, always.
  Refinement& refinement() const { return *parts_.refinement; }
  std::priority_queue<std::pair<double, int>> incumbents_;
  std::optional<double> best_reward_;
  std::unordered_multimap<int, Refinement::Arm> arm_of_;
  // search.reroot_depth: where descents start (the seed until a lineage runs deep below it).
  int search_root_ = 0;
  // selectable()'s memo, and whether the node is on the descent's path, valid for the entries
  // stamped with the current descent's epoch (a deep tree's path is long: a linear search of it
  // per child cost O(depth^2) per descent).
  struct Memo {
    uint32_t epoch = 0;
    uint8_t state = 0;
    bool on_path = false;
  };
  mutable std::vector<Memo> memo_;
  mutable uint32_t epoch_ = 0;
  Memo& memo_entry(int node) const;
  uint8_t& memo(int node) const { return memo_entry(node).state; }
  // Per node: 1 if selectable, kept up to date as jobs start and end. Valid for the nodes
  // that reach no cycle: below them the graph is a DAG, where the per-descent search gives
  // the same answer whatever its order, so the flag is that answer.
  std::vector<uint8_t> selectable_;
  // Per node: 1 if it, or a node below it along tree edges through enterable nodes, is open;
  // kept for every node (tree_selectable()).
  std::vector<uint8_t> tree_open_;
  // Scratch of one descent, reused so that a selection allocates only its path.
  mutable std::vector<std::pair<int, const EdgeRecord*>> candidates_;
  mutable std::vector<double> priors_;
  mutable std::vector<ChildStats> stats_;
  mutable std::vector<WeightedValue> children_;
};

}  // namespace kmcts
