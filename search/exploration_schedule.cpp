#include "search/exploration_schedule.hpp"

#include <algorithm>

KMCTS_OPTION("search.exploration_schedule", String, "linear", std::nullopt, std::nullopt,
             "How exploration weighs over a search (search/exploration_schedule.hpp): constant, or linear (annealed: "
             "the exploration term weighs 1 - s/N at the s-th selection, never under 0.05, N = "
             "search.anneal_selections).")
KMCTS_OPTION("search.anneal_selections", Int, -1, -1, 100000000,
             "search.exploration_schedule=linear: the selections N over which exploration anneals; -1 = the run's "
             "evaluation budget (search.budget), fixed when the run starts (a resumed run keeps it); 0 = constant.")

namespace kmcts {
namespace {

class Constant final : public ExplorationSchedule {
 public:
  double weight(uint64_t) const override { return 1.0; }
};

class Linear final : public ExplorationSchedule {
 public:
  explicit Linear(int64_t horizon) : horizon_(horizon) {}
  double weight(uint64_t selections) const override {
    if (horizon_ <= 0) return 1.0;
    return std::max(0.05, 1.0 - static_cast<double>(selections) / static_cast<double>(horizon_));
  }

 private:
  int64_t horizon_;
};

int64_t horizon(const Config& c) {
  const int64_t n = c.get_int("search.anneal_selections");
  return n < 0 ? c.get_int("search.budget") : n;
}

}  // namespace

void fix_anneal_horizon(Config& config) {
  if (config.get_int("search.anneal_selections") < 0)
    config.set_value("search.anneal_selections", horizon(config), "the run's budget (search.anneal_selections=-1)");
}

using P = std::unique_ptr<ExplorationSchedule>;
KMCTS_REGISTER(ExplorationScheduleRegistry, "constant", [](const Config&) -> P { return std::make_unique<Constant>(); })
KMCTS_REGISTER(ExplorationScheduleRegistry, "linear", [](const Config& c) -> P { return std::make_unique<Linear>(horizon(c)); })

}  // namespace kmcts
