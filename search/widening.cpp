#include "search/widening.hpp"

#include <algorithm>
#include <cmath>

KMCTS_OPTION("search.widening", String, "fixed", std::nullopt, std::nullopt,
             "Widening: fixed (search.branching children per node) or progressive (ceil(k * N^alpha)).")
KMCTS_OPTION("search.widening_k", Double, 1.0, 0.1, 64.0, "Progressive widening: k in ceil(k * N^alpha).")
KMCTS_OPTION("search.widening_alpha", Double, 0.5, 0.0, 1.0,
             "Progressive widening: alpha in ceil(k * N^alpha); 0.5 adds a child each time visits pass a square.")
KMCTS_OPTION("search.widening_max", Int, 16, 1, 1024, "Progressive widening: never more children than this.")

namespace kmcts {
namespace {

class FixedWidening final : public Widening {
 public:
  explicit FixedWidening(int k) : k_(k) {}
  int max_children(int) const override { return k_; }
  bool reads_visits() const override { return false; }

 private:
  int k_;
};

class ProgressiveWidening final : public Widening {
 public:
  ProgressiveWidening(double k, double alpha, int cap) : k_(k), alpha_(alpha), cap_(cap) {}
  int max_children(int visits) const override {
    double allowed = std::ceil(k_ * std::pow(std::max(1, visits), alpha_) - 1e-9);
    return std::clamp(static_cast<int>(allowed), 1, cap_);
  }

 private:
  double k_;
  double alpha_;
  int cap_;
};

}  // namespace

using P = std::unique_ptr<Widening>;
KMCTS_REGISTER(WideningRegistry, "fixed",
               [](const Config& c) -> P { return std::make_unique<FixedWidening>(static_cast<int>(c.get_int("search.branching"))); })
KMCTS_REGISTER(WideningRegistry, "progressive", [](const Config& c) -> P {
  return std::make_unique<ProgressiveWidening>(c.get_double("search.widening_k"), c.get_double("search.widening_alpha"),
                                               static_cast<int>(c.get_int("search.widening_max")));
})

}  // namespace kmcts
