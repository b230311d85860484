#include "search/chain_rule.hpp"

KMCTS_OPTION("search.chain_length", Int, 0, 0, 1000,
             "Greedy refinement chains (search/chain_rule.hpp): at most this many expansions in a row that take "
             "the child just measured, without a descent, while search.chain says the chain goes on; the chain's "
             "results are backed up along its path like any other. 0 = off.")
KMCTS_OPTION("search.chain", String, "improving", std::nullopt, std::nullopt,
             "When a greedy refinement chain goes on (search.chain_length > 0; search/chain_rule.hpp): improving (the "
             "child beat the node it was expanded from) or record (the child beat the best reward measured before "
             "it).")

namespace kmcts {
namespace {

class Improving final : public ChainRule {
 public:
  bool continues(double node, double child, std::optional<double>) const override { return child > node; }
};

class Record final : public ChainRule {
 public:
  bool continues(double, double child, std::optional<double> best_before) const override {
    return !best_before || child > *best_before;
  }
};

}  // namespace

using P = std::unique_ptr<ChainRule>;
KMCTS_REGISTER(ChainRuleRegistry, "improving", [](const Config&) -> P { return std::make_unique<Improving>(); })
KMCTS_REGISTER(ChainRuleRegistry, "record", [](const Config&) -> P { return std::make_unique<Record>(); })

}  // namespace kmcts
