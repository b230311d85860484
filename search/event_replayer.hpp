#pragma once
// Feeds a recorded event log through the coordinator's own apply code: each recorded
// selection is asked of the strategy again (and must match), recorded agent outcomes and
// stored measurements are applied as completions. Shared by `kmcts replay` (into a scratch
// store, then compared) and `kmcts resume` (into the live state, with the store writer muted).
#include <map>
#include <set>
#include <string>

#include "search/coordinator_state.hpp"

namespace kmcts::detail {

class EventReplayer {
 public:
  /// `recorded` holds the sources and measurements the events refer to.
  EventReplayer(Coordinator::State& state, VariantGraph& graph, RunStore& recorded);
  /// Applies one event; returns the mismatch that stopped it, or "".
  std::string apply(const EventRecord& event);

  /// Trials selected whose agent call never reported (in flight when the run stopped).
  std::vector<Selection> open_agent_trials() const;
  /// The selection whose trial created `node` (the root's is empty).
  Selection selection_of(int node) const;

 private:
  Coordinator::State& s_;
  VariantGraph& g_;
  RunStore& recorded_;
  std::map<int64_t, Selection> selections_;    // by trial
  std::set<int64_t> agent_open_;               // trials whose agent call has not reported
  std::map<int, int64_t> creator_;             // node -> trial that created it
  std::map<int64_t, EvalResult> evaluations_;  // by event sequence number
};

}  // namespace kmcts::detail
