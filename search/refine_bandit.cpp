#include "search/refine_bandit.hpp"

#include "core/draws.hpp"

KMCTS_OPTION("search.refine_discount", Double, 0.9, 0.5, 1.0,
             "search.refine=bandit: the decay of an arm's success and failure counts at each of its updates (1 = "
             "never forget; lower follows the search's phases faster).")
KMCTS_OPTION("search.refine_prior", Double, 0.0, 0.0, 100.0,
             "search.refine=bandit: successes the refine arm is credited with before any outcome (decayed like the "
             "others): 0 = even odds at the start; higher starts the search greedier, until refinement stops paying.")

namespace kmcts {

RefineBandit::Arm RefineBandit::choose(CounterRng& rng) const {
  const double r = beta_draw(1 + wins_[refine], 1 + losses_[refine], rng);
  const double d = beta_draw(1 + wins_[descend], 1 + losses_[descend], rng);
  return r >= d ? refine : descend;
}

void RefineBandit::update(Arm arm, bool success) {
  wins_[arm] *= discount_, losses_[arm] *= discount_;
  (success ? wins_ : losses_)[arm] += 1;
}

KMCTS_REGISTER(RefinementRegistry, "bandit", [](const Config& c) -> std::unique_ptr<Refinement> {
  return std::make_unique<RefineBandit>(c.get_double("search.refine_discount"), c.get_double("search.refine_prior"));
})

}  // namespace kmcts
