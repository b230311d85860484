#pragma once
// How much exploration weighs as a search goes on (issue 29: exploration annealed with the
// budget). The MCTS descent divides the values it compares by the weight, which is the same
// as multiplying the policy's exploration term by it. Registered by name
// (search.exploration_schedule):
//   constant - weight 1 throughout: the policy's exploration as configured;
//   linear   - weight 1 - s/N at the s-th selection, never under 0.05 (N =
//              search.anneal_selections; 0 = constant; -1 = the run's evaluation budget, which
//              fix_anneal_horizon() writes into a run's config when the run starts, so that a
//              run resumed with a larger --budget replays under the horizon it was made with).
#include <cstdint>

#include <nlohmann/json.hpp>

#include "core/options.hpp"
#include "core/registry.hpp"

namespace kmcts {

class ExplorationSchedule {
 public:
  virtual ~ExplorationSchedule() = default;
  /// The weight of exploration at a search's `selections`-th selection (from 0), in (0, 1].
  virtual double weight(uint64_t selections) const = 0;
};

using ExplorationScheduleRegistry = Registry<ExplorationSchedule, const Config&>;

/// A run's config as it is recorded: search.anneal_selections = -1 (the budget) becomes
/// search.budget's value.
void fix_anneal_horizon(Config& config);

}  // namespace kmcts
