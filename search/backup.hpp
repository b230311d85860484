#pragma once
// How a node's value follows from its own reward and its children's values. Values are
// recomputed from scratch (idempotently) whenever a path through the node is backed up:
//   value(n) = op(own reward with weight 1, value(c) with weight visits(n -> c) for each edge)
// so a transposition (a child with several parents) is counted once per edge visit,
// never double-counted through accumulated sums. Registered by name: mean, max, power_mean.
#include <vector>

#include "core/options.hpp"
#include "core/registry.hpp"

namespace kmcts {

struct WeightedValue {
  double value = 0;
  double weight = 0;  // edge visits
};

class Backup {
 public:
  virtual ~Backup() = default;
  virtual double value(double own_reward, const std::vector<WeightedValue>& children) const = 0;
};

using BackupRegistry = Registry<Backup, const Config&>;

}  // namespace kmcts
