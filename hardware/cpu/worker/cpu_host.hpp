#pragma once
// The CPU worker's kernel hosts: each kernel (reference, candidate) runs in a process forked
// from the worker before it holds anything of the measurement, which keeps only its own
// shared arena (shared_arena.hpp) mapped, loads its kernel and times each call it is asked
// for on its clock. The worker prepares every call (poison, cache flush), checks every output
// on its own, spans each call on its clock and holds the reports to the timing bound
// (hardware/worker/timing_bound.hpp). A candidate that takes its host over can report any
// time it likes, but not outside those margins, and can reach neither the worker's memory
// nor the reference's buffers.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "hardware/worker/host_link.hpp"
#include "hardware/worker/job.hpp"
#include "hardware/worker/shared_arena.hpp"
#include "hardware/worker/tensors.hpp"
#include "hardware/worker/timing_bound.hpp"

namespace kmcts::worker {

/// A report the timing bound refuses: verdict "rejected", rule timing_bound.
struct BoundRejected : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class CpuHost {
 public:
  /// Forks the host of `kernel`: it unmaps every arena in `others`, loads the kernel and
  /// serves calls on tensors of `mine` (descriptors from `job`).
  CpuHost(bool candidate, const std::string& kernel, const Job& job, SharedArena& mine,
          const std::vector<SharedArena*>& others);
  /// Waits for the kernel to load: false with load_error() set when it did not.
  bool ready();
  const std::string& load_error() const { return link_.load_error(); }
  /// One call on (in, out), both carved from this host's arena: the time the host reports,
  /// ns. Calls of phase "timing" add to timed(); a candidate's report that its own span
  /// contradicts throws BoundRejected; a host that dies throws HostFailure.
  double call(TensorSet& in, TensorSet& out, const std::string& phase);
  const SpanTotals& timed() const { return timed_; }

 private:
  int bind(TensorSet& in, TensorSet& out);

  SharedArena& arena_;
  HostLink link_;
  std::map<std::pair<const void*, const void*>, int> keys_;
  SpanTotals timed_;
};

}  // namespace kmcts::worker
