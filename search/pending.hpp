#pragma once
// How work in flight shapes selection, so parallel workers spread out instead of piling
// onto one promising child while its results are pending. Registered by name:
//   wu_uct       - pending visits count in the exploration term only (Liu et al. 2020);
//   virtual_loss - each pending visit also counts as a loss, pulling Q down by a weight;
//   none         - pending work is ignored (capacity still counts it: a pending leaf is
//                  never handed out twice).
#include "core/options.hpp"
#include "core/registry.hpp"
#include "search/selection_policy.hpp"

namespace kmcts {

class PendingTreatment {
 public:
  virtual ~PendingTreatment() = default;
  /// Effective statistics of a child from its value q, its edge visits n and its pending
  /// visits (trials in flight through it).
  virtual ChildStats child(double q, int visits, int pending, double prior) const = 0;
  virtual ParentStats parent(int visits, int pending) const = 0;
};

using PendingTreatmentRegistry = Registry<PendingTreatment, const Config&>;

}  // namespace kmcts
