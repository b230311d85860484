#pragma once
// A selection policy scores a child of a node during MCTS descent; the highest wins.
// Registered by name ("uct"; PUCT, Thompson and epsilon-greedy come with issue #3).
#include "core/options.hpp"
#include "core/registry.hpp"

namespace kmcts {

struct ParentStats {
  int visits = 0;
  int pending = 0;  // trials in flight through the parent
};

struct ChildStats {
  double value_sum = 0;
  int visits = 0;
  int pending = 0;  // trials in flight through the child (WU-UCT: exploration term only)
  double prior = 1;
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual double score(const ParentStats& parent, const ChildStats& child) const = 0;
};

using PolicyRegistry = Registry<Policy, const Config&>;

}  // namespace kmcts
