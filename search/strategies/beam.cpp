// Beam search, generation by generation. Generation 0's beam is the seed kernel alone.
// Each member of the current beam is expanded until it has search.beam.children expand
// children (in flight included; a member whose Planner runs dry simply gives fewer), the
// next expansion always going to the member with the fewest so far (ties to the better
// member) so a budget that ends mid-generation still spreads over the whole beam. Failed
// variants are repaired first (search.debug_attempts per lineage); a repair belongs to the
// generation of the variant it repairs. While the generation is incomplete and work is in
// flight, next() returns nullopt: the next beam is chosen only once every child of this
// generation, repairs included, has been evaluated.
//
// Next beam: the search.beam.width fastest ok nodes this generation created (ties to the
// oldest). Variants reached again (transpositions) belong to the generation that created
// them and are not candidates. Fallback, when the generation produced no ok node at all:
// the width fastest ok nodes anywhere in the graph that still have room for children
// (fewer than search.beam.children, not closed), i.e. back up to the best unexplored
// alternatives; when there are none the search ends. A generation therefore adds at most
// width * children expand children.
// Rewards are backed up along each node's tree path (root .. node), as MCTS does.
#include <algorithm>

#include "search/strategy_support.hpp"

KMCTS_OPTION("search.beam.width", Int, 4, 1, 64,
             "beam strategy: nodes kept per generation (B). 4 keeps four lineages alive, as many as "
             "search.branching gives the seed under MCTS, so both start equally broad.")
KMCTS_OPTION("search.beam.children", Int, 4, 1, 64,
             "beam strategy: expansions per beam member per generation (N). With width 4 a generation "
             "costs 16 evaluations, so the default budget of 40 reaches three generations deep.")

namespace kmcts {
namespace {

class BeamStrategy final : public LedgerStrategy {
 public:
  BeamStrategy(CommonStrategySettings common, int width, int children)
      : LedgerStrategy(common.debug_attempts, 2 * children), width_(width), children_(children) {}

  std::optional<Selection> next(VariantGraph& graph) override {
    if (graph.size() == 0 || graph.node(0).status != NodeStatus::ok) return std::nullopt;
    if (generation_ < 0) beam_ = {0}, generation_ = 0;
    if (auto repair = ledger_.start_debug(graph)) return repair;
    int member = least_expanded_member(graph);
    if (member < 0 && ledger_.jobs_in_flight() == 0) {
      next_generation(graph);
      member = least_expanded_member(graph);
    }
    if (member < 0) return std::nullopt;  // waiting for the generation, or nothing left
    return ledger_.start_expand(graph.tree_path(member));
  }

  void on_child(VariantGraph& graph, const Selection& s, int child, bool awaiting_evaluation) override {
    LedgerStrategy::on_child(graph, s, child, awaiting_evaluation);
    if (awaiting_evaluation) offspring_.push_back(child);  // a new node: this generation's
  }

 private:
  int least_expanded_member(const VariantGraph& graph) const {
    int best = -1, best_used = 0;
    for (int m : beam_) {  // best member first, so ties keep the better one
      if (!ledger_.has_capacity(graph, m, children_)) continue;
      int used = expand_children(graph, m) + ledger_.pending_expansions(m);
      if (best < 0 || used < best_used) best = m, best_used = used;
    }
    return best;
  }

  void next_generation(const VariantGraph& graph) {
    std::vector<int> candidates;
    for (int n : offspring_)
      if (graph.node(n).status == NodeStatus::ok) candidates.push_back(n);
    if (candidates.empty())
      candidates = ok_nodes_where(graph, [&](int n) { return ledger_.has_capacity(graph, n, children_); });
    std::sort(candidates.begin(), candidates.end(), [&](int a, int b) { return faster(graph, a, b); });
    if (static_cast<int>(candidates.size()) > width_) candidates.resize(static_cast<size_t>(width_));
    beam_ = std::move(candidates);
    offspring_.clear();
    generation_++;
  }

  int width_;
  int children_;
  int generation_ = -1;         // -1 until the seed kernel has been evaluated
  std::vector<int> beam_;       // this generation's members, fastest first
  std::vector<int> offspring_;  // nodes this generation's jobs created, in creation order
};

}  // namespace
}  // namespace kmcts

KMCTS_REGISTER(kmcts::StrategyRegistry, "beam", [](const kmcts::Config& c) -> std::unique_ptr<kmcts::Strategy> {
  return std::make_unique<kmcts::BeamStrategy>(kmcts::CommonStrategySettings::from_config(c),
                                               static_cast<int>(c.get_int("search.beam.width")),
                                               static_cast<int>(c.get_int("search.beam.children")));
})
