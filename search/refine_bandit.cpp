#include "search/refine_bandit.hpp"

#include <cmath>

KMCTS_OPTION("search.refine_discount", Double, 0.9, 0.5, 1.0,
             "search.refine=bandit: the decay of an arm's success and failure counts at each of its updates (1 = "
             "never forget; lower follows the search's phases faster).")
KMCTS_OPTION("search.refine_prior", Double, 0.0, 0.0, 100.0,
             "search.refine=bandit: successes the refine arm is credited with before any outcome (decayed like the "
             "others): 0 = even odds at the start; higher starts the search greedier, until refinement stops paying.")

namespace kmcts {
namespace {

constexpr double kTwoPi = 6.283185307179586;

double normal_draw(CounterRng& rng) {
  const double u1 = 1.0 - rng.uniform(), u2 = rng.uniform();  // u1 in (0, 1]
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
}

double gamma_draw(double shape, CounterRng& rng) {
  if (shape < 1) return gamma_draw(shape + 1, rng) * std::pow(1.0 - rng.uniform(), 1.0 / shape);
  const double d = shape - 1.0 / 3, c = 1.0 / std::sqrt(9 * d);
  while (true) {
    double x, v;
    do {
      x = normal_draw(rng);
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = 1.0 - rng.uniform();
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
  }
}

}  // namespace

double beta_draw(double a, double b, CounterRng& rng) {
  const double x = gamma_draw(a, rng), y = gamma_draw(b, rng);
  return x + y > 0 ? x / (x + y) : 0.5;
}

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
