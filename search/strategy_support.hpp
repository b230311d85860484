#pragma once
// Bookkeeping every strategy needs, whatever it selects: expansions in flight per node (so
// a node never gets more concurrent expansions than its capacity), nodes closed to further
// expansion, the queue of failed variants waiting for the Debugger, the first path that
// reached each node, and mean backup of rewards along a path. A strategy decides *which*
// node to expand; it forwards its on_* calls here so the counts stay right.
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include "core/rng.hpp"
#include "search/strategy.hpp"

namespace kmcts {

/// The options every strategy reads: the seed of its draws, the per-node child cap where the
/// strategy has none of its own, and the repairs per lineage of failed variants.
struct CommonStrategySettings {
  uint64_t seed = 0;
  int branching = 4;
  int debug_attempts = 2;
  static CommonStrategySettings from_config(const Config& c);
};

/// A count per node id, dense (ids are 0, 1, 2, ...): O(1) where a map would be O(log N).
class NodeCounts {
 public:
  int get(int node) const { return node >= 0 && node < static_cast<int>(v_.size()) ? v_[node] : 0; }
  int& at(int node) {
    if (node >= static_cast<int>(v_.size())) v_.resize(static_cast<size_t>(node) + 1 + v_.size() / 2, 0);
    return v_[node];
  }

 private:
  std::vector<int> v_;
};

class JobLedger {
 public:
  /// `max_debug_attempts`: repairs per lineage of failed variants. `max_expansion_attempts`:
  /// agent calls per node before it is closed (agents may keep proposing known variants).
  JobLedger(int max_debug_attempts, int max_expansion_attempts);

  /// The oldest failed variant waiting for a repair, as a started debug job; nullopt if none.
  /// `top`: where the selection's path starts, if the failed node lies below it (else the root).
  std::optional<Selection> start_debug(VariantGraph& graph, int top = 0);
  /// The failed variant start_debug() would take next; -1 if none waits.
  int next_debug() const { return debug_queue_.empty() ? -1 : debug_queue_.front(); }
  /// Starts an expansion of path.back(); `path` is root .. node.
  Selection start_expand(std::vector<int> path);

  void expansion_failed(const Selection& s, bool exhausted);
  void child(VariantGraph& graph, const Selection& s, int child, bool awaiting_evaluation);
  /// Sets the node's reward, backs it up, and queues a failed node for repair.
  void evaluated(VariantGraph& graph, const Selection& s, int node, double reward);

  /// For a strategy that recomputes the statistics along a job's path itself (MCTS): child()
  /// and evaluated() then back up nothing, and the strategy counts the edges walked.
  void leave_backup_to_strategy() { backs_up_ = false; }

  /// Expand children of `node` plus expansions in flight, against `cap`; closed nodes have none.
  bool has_capacity(const VariantGraph& graph, int node, int cap) const;
  bool closed(int node) const { return closed_.get(node) != 0; }
  int pending_expansions(int node) const { return pending_expansions_.get(node); }
  int pending_visits(int node) const { return pending_visits_.get(node); }
  /// Jobs handed out and not yet finished (an agent call, or its child's evaluation).
  int jobs_in_flight() const { return jobs_in_flight_; }
  bool debug_waiting() const { return !debug_queue_.empty(); }
  /// The job's path with `node` appended (unless it ends there and not `always`: a child
  /// equal to its parent is a self-loop, walked twice), in a buffer reused by every call
  /// (valid until the next one).
  const std::vector<int>& path_to(const Selection& s, int node, bool always = false);

 private:
  void start(const Selection& s);
  void finish(const Selection& s);  // the job is over: drop its pending marks
  void note_attempt_over(const Selection& s, bool exhausted);

  int max_debug_attempts_;
  int max_expansion_attempts_;
  int jobs_in_flight_ = 0;
  bool backs_up_ = true;
  NodeCounts pending_visits_;      // jobs in flight through each node
  NodeCounts pending_expansions_;  // expansions in flight at each node
  NodeCounts expansion_attempts_;
  NodeCounts closed_;              // 1: no more plans here
  std::deque<int> debug_queue_;
  std::vector<int> path_;  // path_to()'s buffer
};

/// A strategy whose outcomes are all bookkeeping: it forwards the coordinator's on_* calls to
/// its ledger. Subclasses choose the jobs in next() and may extend an on_* (calling this one).
class LedgerStrategy : public Strategy {
 public:
  void on_expansion_failed(VariantGraph& graph, const Selection& s, bool exhausted) override;
  void on_child(VariantGraph& graph, const Selection& s, int child, bool awaiting_evaluation) override;
  void on_evaluated(VariantGraph& graph, const Selection& s, int node, double reward) override;

  const JobLedger& ledger() const { return ledger_; }

 protected:
  LedgerStrategy(int max_debug_attempts, int max_expansion_attempts)
      : ledger_(max_debug_attempts, max_expansion_attempts) {}
  JobLedger ledger_;
};

/// Ids of the successfully evaluated nodes for which `open(id)` holds, ascending.
template <class Open>
std::vector<int> ok_nodes_where(const VariantGraph& graph, Open open) {
  std::vector<int> out;
  for (int n = 0; n < graph.size(); ++n)
    if (graph.node(n).status == NodeStatus::ok && open(n)) out.push_back(n);
  return out;
}

/// Adds `reward` to visits/value_sum of every node on `path` and counts the edges walked.
void backup_mean(VariantGraph& graph, const std::vector<int>& path, double reward);
/// Counts the edges walked along `path` (one visit each), nothing else.
void count_walk(VariantGraph& graph, const std::vector<int>& path);
/// Number of expand edges out of `node` (debug edges and the capacity they do not use aside).
int expand_children(const VariantGraph& graph, int node);
/// True if `a` ranks before `b`: a higher speedup, or the same and older (lower id).
bool faster(const VariantGraph& graph, int a, int b);
/// The candidate with the highest speedup; ties go to the oldest (lowest id). -1 if none.
int fastest(const VariantGraph& graph, const std::vector<int>& candidates);
/// Draws for one job of a named strategy: keyed by (seed, strategy name, job number), so a
/// run's draws do not depend on how many draws other parts of the engine made.
CounterRng job_rng(uint64_t seed, std::string_view strategy, uint64_t job);

}  // namespace kmcts
