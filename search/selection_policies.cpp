// The selection policies. Rewards are log speedups (or ranks in [-1, 1]), so one unit of
// value is an e-fold speedup; the exploration constants' defaults are set on that scale.
#include <cmath>
#include <limits>

#include "search/selection_policy.hpp"

KMCTS_OPTION("search.exploration", Double, 0.5, 0.0, 100.0,
             "UCT exploration constant c in Q + c*sqrt(ln N/n). Rewards are log speedups, so c = 1 weighs one unit "
             "of exploration like an e-fold speedup; with search.value_scale=siblings the values compared lie in "
             "[0, 1] and c is relative to the siblings' spread. 0.5 (with the other defaults) did best in the grid "
             "over the search-quality landscapes, bench/results/mcts-tuning.md.")
KMCTS_OPTION("search.puct.c", Double, 1.5, 0.0, 100.0,
             "PUCT constant in Q + c*P*sqrt(N)/(1+n) (AlphaZero form); P is the Planner's prior of the move.")
KMCTS_OPTION("search.thompson.sigma", Double, 0.5, 0.001, 100.0,
             "Thompson sampling: reward noise scale; a child's value is drawn from N(Q, sigma^2/(n+1)). "
             "0.5 ~ the spread of log speedups among sibling variants.")
KMCTS_OPTION("search.policy_epsilon", Double, 0.1, 0.0, 1.0,
             "Epsilon-greedy selection policy: chance of descending into a uniformly random child.")

namespace kmcts {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

class Uct final : public ScoringPolicy {
 public:
  explicit Uct(double c) : c_(c) {}
  double score(const ParentStats& parent, const ChildStats& child, CounterRng&) const override {
    return score(std::log(std::max(1.0, parent.visits)), child);
  }
  // The same scores, with the parent's logarithm taken once for all its children.
  size_t choose(const ParentStats& parent, const std::vector<ChildStats>& children, CounterRng&) const override {
    const double log_n = std::log(std::max(1.0, parent.visits));
    return first_best(children, [&](const ChildStats& child) { return score(log_n, child); });
  }

 private:
  double score(double log_n, const ChildStats& child) const {
    if (child.visits <= 0) return kInf;  // every child once before any twice
    return child.q + c_ * std::sqrt(log_n / child.visits);
  }
  double c_;
};

class Puct final : public ScoringPolicy {
 public:
  explicit Puct(double c) : c_(c) {}
  double score(const ParentStats& parent, const ChildStats& child, CounterRng&) const override {
    return child.q + c_ * child.prior * std::sqrt(std::max(1.0, parent.visits)) / (1.0 + child.visits);
  }

 private:
  double c_;
};

class Thompson final : public ScoringPolicy {
 public:
  explicit Thompson(double sigma) : sigma_(sigma) {}
  double score(const ParentStats&, const ChildStats& child, CounterRng& rng) const override {
    // Box-Muller from two counter draws: the same (seed, selection, child) gives the same sample.
    double u1 = 1.0 - rng.uniform(), u2 = rng.uniform();
    double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
    return child.q + sigma_ / std::sqrt(std::max(0.0, child.visits) + 1.0) * z;
  }

 private:
  double sigma_;
};

class EpsilonGreedy final : public SelectionPolicy {
 public:
  explicit EpsilonGreedy(double epsilon) : epsilon_(epsilon) {}
  size_t choose(const ParentStats&, const std::vector<ChildStats>& children, CounterRng& rng) const override {
    if (rng.uniform() < epsilon_) return static_cast<size_t>(rng.below(children.size()));
    size_t best = 0;
    for (size_t i = 1; i < children.size(); ++i)
      if (children[i].q > children[best].q) best = i;
    return best;
  }

 private:
  double epsilon_;
};

}  // namespace

size_t ScoringPolicy::choose(const ParentStats& parent, const std::vector<ChildStats>& children, CounterRng& rng) const {
  return first_best(children, [&](const ChildStats& child) { return score(parent, child, rng); });
}

using P = std::unique_ptr<SelectionPolicy>;
KMCTS_REGISTER(SelectionPolicyRegistry, "uct", [](const Config& c) -> P { return std::make_unique<Uct>(c.get_double("search.exploration")); })
KMCTS_REGISTER(SelectionPolicyRegistry, "puct", [](const Config& c) -> P { return std::make_unique<Puct>(c.get_double("search.puct.c")); })
KMCTS_REGISTER(SelectionPolicyRegistry, "thompson",
               [](const Config& c) -> P { return std::make_unique<Thompson>(c.get_double("search.thompson.sigma")); })
KMCTS_REGISTER(SelectionPolicyRegistry, "egreedy",
               [](const Config& c) -> P { return std::make_unique<EpsilonGreedy>(c.get_double("search.policy_epsilon")); })

}  // namespace kmcts
