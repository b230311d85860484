#include "search/expansion_rule.hpp"

KMCTS_OPTION("search.expansion", String, "compare", std::nullopt, std::nullopt,
             "Where a descent stops to expand (search/expansion_rule.hpp): first_open (the first node on the path "
             "with room for a child, the classic rule), compare (at a node with room, expanding it competes in the "
             "policy's choice with its children, as a virtual child valued at the node's own reward with one visit) "
             "or adaptive (as compare, but the virtual child is a generation arm that learns: valued at the mean of "
             "the node's own reward and the rewards of every child generated from it, failures included, with that "
             "many visits; with a wide search.branching the tree's width then follows what generation has paid at "
             "each node, as in AB-MCTS) or thompson (AB-MCTS-A: a Thompson draw between generating at the node and "
             "descending into its children, Beta posteriors over scaled scores, generation's prior weighted by the "
             "Planner's preference for the next plan; search/expansion_rule.hpp).")

namespace kmcts {
namespace {

class FirstOpen final : public ExpansionRule {
 public:
  bool competes() const override { return false; }
  std::pair<double, int> generation_arm(const VariantGraph& graph, int node) const override {
    return {graph.node(node).reward, 1};  // never asked: the node is expanded without a choice
  }
};

class Compare final : public ExpansionRule {
 public:
  bool competes() const override { return true; }
  std::pair<double, int> generation_arm(const VariantGraph& graph, int node) const override {
    return {graph.node(node).reward, 1};
  }
};

class Adaptive final : public ExpansionRule {
 public:
  bool competes() const override { return true; }
  std::pair<double, int> generation_arm(const VariantGraph& graph, int node) const override {
    double sum = graph.node(node).reward;
    int generated = 1;
    graph.for_each_child(node, [&](int c, const EdgeRecord&) {  // every child made from here, failed or not
      const NodeRecord& child = graph.node(c);
      if (child.status != NodeStatus::pending) sum += child.reward, ++generated;
      return true;
    });
    return {sum / generated, generated};
  }
};

}  // namespace

using P = std::unique_ptr<ExpansionRule>;
KMCTS_REGISTER(ExpansionRuleRegistry, "first_open", [](const Config&) -> P { return std::make_unique<FirstOpen>(); })
KMCTS_REGISTER(ExpansionRuleRegistry, "compare", [](const Config&) -> P { return std::make_unique<Compare>(); })
KMCTS_REGISTER(ExpansionRuleRegistry, "adaptive", [](const Config&) -> P { return std::make_unique<Adaptive>(); })

}  // namespace kmcts
