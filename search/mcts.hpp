#pragma once
// Monte Carlo tree search over the variant graph, assembled from a selection Policy and
// a fixed branching limit, with mean backup of the reward along the selected path.
// Failed variants are leaves; each is queued once for the Debugger while its lineage
// has repair attempts left.
#include <deque>
#include <map>
#include <memory>
#include <set>

#include "search/policy.hpp"
#include "search/strategy.hpp"

namespace kmcts {

class MctsStrategy final : public Strategy {
 public:
  struct Settings {
    int branching = 4;          // children per node, counting expansions in flight
    int max_debug_attempts = 2; // repairs per lineage of failed variants
    int max_expansion_attempts = 8;  // agent calls per node before it is closed
  };
  MctsStrategy(Settings settings, std::unique_ptr<Policy> policy);

  std::optional<Selection> next(VariantGraph& graph) override;
  void on_expansion_failed(VariantGraph& graph, const Selection& s, bool exhausted) override;
  void on_child(VariantGraph& graph, const Selection& s, int child, bool awaiting_evaluation) override;
  void on_evaluated(VariantGraph& graph, const Selection& s, int node, double reward) override;

  /// Children of `node` plus expansions in flight, against the branching limit.
  bool has_capacity(const VariantGraph& graph, int node) const;

 private:
  bool selectable(const VariantGraph& graph, int node, std::map<int, int>& memo) const;
  void backup(VariantGraph& graph, const std::vector<int>& path, double reward);
  void release(const Selection& s);  // the trial is over: drop its pending marks
  int count(const std::map<int, int>& m, int key) const;

  Settings settings_;
  std::unique_ptr<Policy> policy_;
  std::map<int, int> pending_visits_;      // trials in flight through each node
  std::map<int, int> pending_expansions_;  // expansions in flight at each node
  std::map<int, int> expansion_attempts_;
  std::set<int> closed_;                   // no more plans here
  std::map<int, std::vector<int>> paths_;  // first selection path that reached each node
  std::deque<int> debug_queue_;
};

}  // namespace kmcts
