#pragma once
// A search strategy in ask/tell form. The coordinator asks next() whenever a slot is free
// (late binding: nothing is selected ahead of time) and tells it what came of each job.
// All calls happen on the coordinator thread, which is the only writer of the graph.
#include <optional>
#include <vector>

#include "core/options.hpp"
#include "core/registry.hpp"
#include "search/variant_graph.hpp"

namespace kmcts {

struct Selection {
  enum class Kind { expand, debug };
  Kind kind = Kind::expand;
  int node = -1;          // the node to expand, or the failed node to repair
  std::vector<int> path;  // root .. node, as selected
  int64_t trial = 0;      // assigned by the coordinator: request order, for lockstep apply
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  /// The next job, or nullopt if nothing is selectable now (everything open is pending).
  virtual std::optional<Selection> next(VariantGraph& graph) = 0;
  /// The agents produced nothing usable. `exhausted`: the node has no more plans to give.
  virtual void on_expansion_failed(VariantGraph& graph, const Selection& s, bool exhausted) = 0;
  /// The agents produced `child` (new, awaiting evaluation, or an existing node).
  virtual void on_child(VariantGraph& graph, const Selection& s, int child, bool awaiting_evaluation) = 0;
  /// `node`, created by `s` (or the root, with an empty selection path), was evaluated.
  virtual void on_evaluated(VariantGraph& graph, const Selection& s, int node, double reward) = 0;
};

using StrategyRegistry = Registry<Strategy, const Config&>;

}  // namespace kmcts
