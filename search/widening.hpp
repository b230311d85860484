#pragma once
// How many children a node may have, given its visits (expansions in flight count as
// children). Registered by name:
//   fixed       - search.branching children, whatever the visits;
//   progressive - ceil(k * N^alpha) children after N visits (Coulom 2007; Chaslot et al.
//                 2008): widen as evidence accumulates, so a poor node is not expanded wide.
#include "core/options.hpp"
#include "core/registry.hpp"

namespace kmcts {

class Widening {
 public:
  virtual ~Widening() = default;
  virtual int max_children(int visits) const = 0;
  /// Whether max_children() depends on the visits: if not, a backup (which changes only visits)
  /// changes no node's room, and the search need not look at the path's nodes again.
  virtual bool reads_visits() const { return true; }
};

using WideningRegistry = Registry<Widening, const Config&>;

}  // namespace kmcts
