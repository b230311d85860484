#include "search/refinement.hpp"

KMCTS_OPTION("search.refine", String, "bandit", std::nullopt, std::nullopt,
             "Refining the incumbent (search/refinement.hpp): bandit (before each selection a two-armed bandit, "
             "search/refine_bandit.hpp, chooses between expanding the fastest measured node with room, as the greedy "
             "baselines do, and the policy's descent; an arm succeeds when its child beats the best measured so far) "
             "or off (every selection is a descent).")

namespace kmcts {
namespace {

class Off final : public Refinement {
 public:
  bool active() const override { return false; }
  Arm choose(CounterRng&) const override { return descend; }
  void update(Arm, bool) override {}
};

}  // namespace

KMCTS_REGISTER(RefinementRegistry, "off", [](const Config&) -> std::unique_ptr<Refinement> { return std::make_unique<Off>(); })

}  // namespace kmcts
