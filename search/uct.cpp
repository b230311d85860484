// UCT (Kocsis & Szepesvari 2006): Q + c * sqrt(ln N_parent / N_child), with visits that are
// still in flight counted in the exploration term only (WU-UCT, Liu et al. 2020), so
// parallel workers spread out instead of piling onto one child while its result is pending.
#include <cmath>
#include <limits>

#include "search/policy.hpp"

KMCTS_OPTION("search.exploration", Double, 1.0, 0.0, 100.0,
             "UCT exploration constant c in Q + c*sqrt(ln N/n). Rewards are log speedups, so "
             "c ~ 1 weighs one unit of exploration like an e-fold speedup.")

namespace kmcts {
namespace {

class Uct final : public Policy {
 public:
  explicit Uct(double c) : c_(c) {}
  double score(const ParentStats& parent, const ChildStats& child) const override {
    int n = child.visits + child.pending;
    if (n == 0) return std::numeric_limits<double>::infinity();
    double q = child.visits > 0 ? child.value_sum / child.visits : 0.0;
    double total = std::max(1, parent.visits + parent.pending);
    return q + c_ * std::sqrt(std::log(total) / n);
  }

 private:
  double c_;
};

}  // namespace

KMCTS_REGISTER(PolicyRegistry, "uct",
               [](const Config& c) -> std::unique_ptr<Policy> { return std::make_unique<Uct>(c.get_double("search.exploration")); })

}  // namespace kmcts
