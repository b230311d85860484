// search.expansion=thompson (search/expansion_rule.hpp): AB-MCTS-A's choice between generating
// at a node and descending into its children, with the Planner's preference for the next plan.
#include <algorithm>
#include <cmath>

#include "core/draws.hpp"
#include "search/expansion_rule.hpp"

KMCTS_OPTION("search.expansion_prior", Double, 2.0, 0.1, 100.0,
             "search.expansion=thompson: pseudo-scores each arm (generate here, descend) starts with, at the node's "
             "own score (generation's odds multiplied by the Planner's preference for its next plan); higher trusts "
             "the prior longer.")
KMCTS_OPTION("search.expansion_planner", Double, 1.0, 0.0, 4.0,
             "search.expansion=thompson: weight w of the Planner's preference for the next plan: generation's prior "
             "odds are multiplied by (its prior over its call's mean prior)^w. 1 = as the Planner says, 0 = ignored "
             "(AB-MCTS without priors).")

namespace kmcts {
namespace {

class ThompsonWidth final : public ExpansionRule {
 public:
  ThompsonWidth(double strength, double planner) : strength_(strength), planner_(planner) {}
  bool competes() const override { return true; }
  std::pair<double, int> generation_arm(const VariantGraph& graph, int node) const override {
    return {graph.node(node).reward, 1};  // never asked: generate() chooses
  }

  std::optional<bool> generate(const VariantGraph& graph, int node, const ValueRange& tree, CounterRng& rng) const override {
    const double spread = tree.seen ? tree.hi - tree.lo : 0;
    auto score = [&](double v) { return spread > 0 ? std::clamp((v - tree.lo) / spread, 0.0, 1.0) : 0.5; };
    const NodeRecord& here = graph.node(node);
    // Both arms start with `strength_` pseudo-scores at the node's own score: a child is
    // expected to be about as good as its parent. Generation's odds are multiplied by the
    // Planner's preference for the plan it will take (1 when the Planner is asked afresh).
    const double own = std::clamp(score(here.reward), 0.01, 0.99);
    // (A queued plan whose prior is 0 reads as none queued: no preference either way.)
    const double share = here.next_plan_share > 0 ? std::pow(here.next_plan_share, planner_) : 1.0;
    const double odds = share * own / (1 - own), prior_gen = odds / (1 + odds);
    double gen_a = strength_ * prior_gen, gen_b = strength_ * (1 - prior_gen);
    double cont_a = strength_ * own, cont_b = strength_ * (1 - own);
    graph.for_each_child(node, [&](int c, const EdgeRecord& e) {
      const NodeRecord& child = graph.node(c);
      if (child.status == NodeStatus::pending) return true;
      const double s = child.status == NodeStatus::ok ? score(child.reward) : 0.0;  // a failure scores 0
      gen_a += s, gen_b += 1 - s;  // one generation, one score
      // The visits through it after the one that generated it: what descending there brought,
      // at the child's backed-up value. (A transposition made while its node was still pending
      // was not counted when made, so its first descent is missed here: a small undercount.)
      if (const int later = e.visits - 1; later > 0 && child.visits > 0) {
        const double q = score(child.value_sum / child.visits);
        cont_a += later * q, cont_b += later * (1 - q);
      }
      return true;
    });
    return beta_draw(gen_a, gen_b, rng) >= beta_draw(cont_a, cont_b, rng);
  }

 private:
  double strength_, planner_;
};

}  // namespace

KMCTS_REGISTER(ExpansionRuleRegistry, "thompson", [](const Config& c) -> std::unique_ptr<ExpansionRule> {
  return std::make_unique<ThompsonWidth>(c.get_double("search.expansion_prior"), c.get_double("search.expansion_planner"));
})

}  // namespace kmcts
