// Linear refinement, the "keep improving the best kernel" baseline: one trajectory, one job
// at a time. Rules, in order:
//  1. While a job is in flight nothing else is handed out (extra workers idle): a
//     trajectory is sequential by definition, each step sees every earlier result.
//  2. A failed variant waiting for repair is repaired first (search.debug_attempts per
//     lineage, as in MCTS), so a refinement that broke the kernel gets fixed before moving on.
//  3. Otherwise expand the best node found so far: the ok node with the highest speedup,
//     ties to the oldest. A node takes at most search.branching expand children; when the
//     best has used them (or its planner ran dry) the next best with capacity is refined.
//     Without that fallback one stubborn node would end the run with budget left.
// Rewards are backed up along the node's tree path (root .. node), as MCTS does along its
// selection path, so visits/value_sum in the store read the same way.
#include "search/strategy_support.hpp"

namespace kmcts {
namespace {

class LinearStrategy final : public LedgerStrategy {
 public:
  explicit LinearStrategy(CommonStrategySettings common)
      : LedgerStrategy(common.debug_attempts, 2 * common.branching), branching_(common.branching) {}

  std::optional<Selection> next(VariantGraph& graph) override {
    if (ledger_.jobs_in_flight() > 0) return std::nullopt;
    if (auto repair = ledger_.start_debug(graph)) return repair;
    int best = fastest(graph, ok_nodes_where(graph, [&](int n) { return ledger_.has_capacity(graph, n, branching_); }));
    if (best < 0) return std::nullopt;
    return ledger_.start_expand(graph.tree_path(best));
  }

 private:
  int branching_;
};

}  // namespace
}  // namespace kmcts

KMCTS_REGISTER(kmcts::StrategyRegistry, "linear", [](const kmcts::Config& c) -> std::unique_ptr<kmcts::Strategy> {
  return std::make_unique<kmcts::LinearStrategy>(kmcts::CommonStrategySettings::from_config(c));
})
