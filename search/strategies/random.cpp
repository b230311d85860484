// Random sampling, the "sample N independent variants" baseline. Each expansion job picks a
// node uniformly at random among the successfully evaluated nodes that still have capacity
// (fewer than search.branching expand children, expansions in flight included, and not
// closed). Uniform over *nodes*, not over depth or lineage: no signal from the measured
// speedups steers the choice, which is what makes it the floor any search must beat.
// Restricting to ok nodes keeps it comparable with the other strategies, which never
// expand a variant that did not compile or verify (failed ones go to the Debugger).
//
// search.random.root_only: only the seed kernel is ever expanded, with no child cap (the
// Planner running out of plans ends it), i.e. best-of-N sampling from the seed. Repairs
// still follow search.debug_attempts; set it to 0 for pure independent sampling.
#include <limits>

#include "search/strategy_support.hpp"

KMCTS_OPTION("search.random.root_only", Bool, false, std::nullopt, std::nullopt,
             "random strategy: expand only the seed kernel (best-of-N independent samples) instead of "
             "any ok node with capacity. Off by default: sampling over the whole graph is the weaker "
             "assumption about what a baseline may reuse.")

namespace kmcts {
namespace {

class RandomStrategy final : public LedgerStrategy {
 public:
  RandomStrategy(CommonStrategySettings common, bool root_only)
      : LedgerStrategy(common.debug_attempts,
                       root_only ? std::numeric_limits<int>::max() : 2 * common.branching),
        common_(common),
        root_only_(root_only) {}

  std::optional<Selection> next(VariantGraph& graph) override {
    if (auto repair = ledger_.start_debug(graph)) return repair;
    auto open = ok_nodes_where(graph, [&](int n) {
      if (root_only_) return n == 0 && !ledger_.closed(n);
      return ledger_.has_capacity(graph, n, common_.branching);
    });
    if (open.empty()) return std::nullopt;
    CounterRng rng = job_rng(common_.seed, "random", jobs_++);
    int node = open[rng.below(open.size())];
    return ledger_.start_expand(graph.tree_path(node));
  }

 private:
  CommonStrategySettings common_;
  bool root_only_;
  uint64_t jobs_ = 0;  // names each draw: (seed, "random", job number)
};

}  // namespace
}  // namespace kmcts

KMCTS_REGISTER(kmcts::StrategyRegistry, "random", [](const kmcts::Config& c) -> std::unique_ptr<kmcts::Strategy> {
  return std::make_unique<kmcts::RandomStrategy>(kmcts::CommonStrategySettings::from_config(c),
                                                 c.get_bool("search.random.root_only"));
})
