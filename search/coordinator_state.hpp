#pragma once
// Internals of the coordinator shared by its two source files (dispatch and apply).
#include <algorithm>
#include <cstdint>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>

#include "search/completion_queue.hpp"
#include "search/coordinator.hpp"
#include "search/progress.hpp"
#include "search/store_writer.hpp"
#include "search/thread_pool.hpp"
#include "search/worker_pool.hpp"

namespace kmcts::detail {

struct AgentDone {
  Selection selection;
  CodeResult code;
  Plan plan;                      // the plan the coder followed (empty for debug)
  std::vector<Plan> spare_plans;  // further plans from the same planner call
  bool exhausted = false;         // the planner had nothing left for this node
  std::string error;
  double seconds = 0;
  // Prepared from code and plan on the agent's thread (prepare_child), so that the coordinator
  // only moves them; a replay, which has no agent thread, prepares them in apply_agent.
  bool prepared = false;
  std::string hash;  // canonical hash of code.source
  std::shared_ptr<const nlohmann::json> meta;       // code.meta, shared by views, event and store
  std::shared_ptr<const nlohmann::json> plan_data;  // the edge's plan data (plan.data with its prior)
  std::string known_key;                            // KnownVariants::key_of(code.meta)
  nlohmann::json spare_json;  // spare_plans_json(spare_plans), made on the agent's thread (null: not made)
};

/// A copy of the fields RunStore::update_node writes (not meta and plan, fixed at add_node).
NodeRecord node_stats(const NodeRecord& n);
/// node_stats() plus the fixed numbers of a node's insert (depth, created_seq): its strings
/// and meta are left for the writer thread to fill.
NodeRecord insert_row(const NodeRecord& n);

/// Fills AgentDone's prepared fields from its code and plan (pure: any thread).
void prepare_child(AgentDone& done);

struct EvalDone {
  Selection selection;
  int node = -1;
  std::shared_ptr<const EvalResult> result;  // made on the worker's thread, shared by views and store
};

/// A finished job. On the heap, made by the thread that ran it: the coordinator moves a
/// pointer, not a few hundred bytes another core just wrote.
using Completion = std::variant<std::unique_ptr<AgentDone>, std::unique_ptr<EvalDone>>;

/// A pointer to what `owner` holds that owns nothing: copies of it touch no reference count.
/// For what the coordinator's State owns, which outlives every job (see State::view()).
template <class T>
std::shared_ptr<const T> borrow(const std::shared_ptr<T>& owner) {
  return std::shared_ptr<const T>(std::shared_ptr<const T>(), owner.get());
}

/// v[id], growing v (by half again, zero-filled) when id is past its end: the per-node
/// vectors of the coordinator are dense, since node ids are 0, 1, 2, ...
template <class T>
T& dense_at(std::vector<T>& v, int id) {
  if (v.size() <= static_cast<size_t>(id)) v.resize(static_cast<size_t>(id) + 1 + v.size() / 2);
  return v[static_cast<size_t>(id)];
}

/// Nodes and edges whose statistics changed since the last flush, each kept once: marking is
/// O(1) (every event marks its whole path, so most marks repeat), draining is in id order.
/// An edge is marked in a slot of its child (the first parent marked for it there); only a
/// child's further parents (transpositions) go to a hash set.
class DirtySet {
 public:
  void node(int id) {
    if (!std::exchange(dense_at(node_marked_, id), 1)) nodes_.push_back(id);
  }
  void edge(int parent, int child) {
    int& slot = dense_at(edge_slot_, child);
    if (slot == parent + 1) return;
    if (slot == 0) {
      slot = parent + 1;
    } else if (!other_edges_.insert(static_cast<uint64_t>(static_cast<uint32_t>(parent)) << 32 | static_cast<uint32_t>(child)).second) {
      return;
    }
    edges_.emplace_back(parent, child);
  }
  /// The marked ids (sorted), then cleared.
  std::pair<std::vector<int>, std::vector<std::pair<int, int>>> drain() {
    for (int id : nodes_) node_marked_[static_cast<size_t>(id)] = 0;
    for (const auto& e : edges_) edge_slot_[static_cast<size_t>(e.second)] = 0;
    other_edges_.clear();
    std::sort(nodes_.begin(), nodes_.end());
    std::sort(edges_.begin(), edges_.end());
    return {std::exchange(nodes_, {}), std::exchange(edges_, {})};
  }

 private:
  std::vector<char> node_marked_;
  std::vector<int> nodes_;
  std::vector<int> edge_slot_;  // by child: 1 + the parent of its marked edge, 0 if none
  std::unordered_set<uint64_t> other_edges_;
  std::vector<std::pair<int, int>> edges_;
};

}  // namespace kmcts::detail

namespace kmcts {

struct Coordinator::State {
  State(const Problem& p, SearchSettings s, SearchParts parts, RunStore& st);

  const Problem& problem;
  SearchSettings settings;
  SearchParts parts;
  RunStore& store;        // read directly; written only through `writer`
  StoreWriter writer;     // the run store's writer thread (declared after store)
  // Declared before the pools, so it outlives the jobs they finish when a search unwinds.
  CompletionQueue<detail::Completion> completions;
  // What agent calls read borrows these (see view()): declared before the pools, they
  // outlive every job, and an entry once set is never replaced.
  std::shared_ptr<KnownVariants> known = std::make_shared<KnownVariants>();
  // The archive's lines for the Planner: run_info's memory_candidates ranked again once the seed
  // is measured (memory_prompt_after_seed(), at the first plan call; set once, then borrowed by
  // every plan call), from `memory_taken` (the run_info).
  std::string memory;
  bool memory_resolved = false;
  nlohmann::json memory_taken;
  const std::string* planner_memory();
  // Per node, by id (dense: nodes are numbered 0, 1, 2, ...; the accessors grow them).
  std::vector<std::shared_ptr<const std::string>> sources;  // its source (shared with views and jobs)
  std::vector<std::shared_ptr<const EvalResult>> results;  // its evaluation, null until measured
  std::vector<std::shared_ptr<const EvalResult>> retired_results;  // replaced in `results`, still borrowed
  // Plans proposed for it, not yet used, oldest first (a few: a vector, which allocates
  // nothing until used, where a deque allocates two blocks for every node).
  std::vector<std::vector<Plan>> queued_plans;
  // Beside each queued plan, its prior over the mean prior of the call that proposed it
  // (NodeRecord::next_plan_share is the first's).
  std::vector<std::vector<double>> queued_shares;
  /// While replaying a log: the trials selected whose agent outcome is not (yet) in it, with
  /// what their call had in hand (the node's call count, the spare plan taken), so that a
  /// resume makes the very call the run would have made.
  struct OpenCall {
    int call = 0;
    std::optional<Plan> plan;
  };
  std::map<int64_t, OpenCall> open_calls;
  std::vector<int> agent_calls;                            // agent calls made for it (keys their RNG)
  // Its plan history (root to node): the link made with it, shared with every view of it.
  std::vector<std::shared_ptr<const PlanLink>> plan_links;
  // Its meta, shared by the views, the event and the store write (set when the node is made).
  mutable std::vector<std::shared_ptr<const nlohmann::json>> metas;
  // Three kinds of slots: agent calls (slow, network-bound), compiles (CPU cores) and
  // measurements (one per device); a compile never holds a measurement slot.
  ThreadBudget threads;
  ThreadPool agents;   // dedicated threads: agent calls mostly wait, and must not hold TBB's
  // Measurements before compiles: pools are destroyed in reverse, each waiting for its jobs,
  // and a finishing compile job may still hand its build to the measurement pool.
  WorkerPool measurements;
  WorkerPool compiles;

  template <class T>
  static T& at_node(std::vector<T>& v, int node) {
    return detail::dense_at(v, node);
  }
  const std::shared_ptr<const std::string>& source_of(int node) const { return sources.at(static_cast<size_t>(node)); }
  /// Its evaluation, null until measured (a reference: reading it touches no reference count).
  const std::shared_ptr<const EvalResult>& result_of(int node) const {
    static const std::shared_ptr<const EvalResult> none;
    return static_cast<size_t>(node) < results.size() ? results[static_cast<size_t>(node)] : none;
  }
  int64_t seq = 0;
  int64_t trials = 0;        // trials started; numbers them in request order
  int in_flight = 0;       // trials: agent call, then maybe an evaluation
  int agent_stage = 0;     // trials still in their agent call
  int evaluations_started = 0;
  int evaluations_done = 0;
  int failures = 0;
  int agent_calls_total = 0;
  int agent_calls_done = 0;    // agent calls finished, and of them failed (an exhausted agent's
  int agent_failures = 0;      // "nothing left to propose" is not a failure)
  std::string first_agent_failure;  // its kind and error, quoted in the run's failure
  int transpositions = 0;
  int best_node = -1;      // the fastest variant measured so far
  std::map<std::string, int> failures_by_verdict;
  // Nodes and edges whose visit statistics changed since the last flush to the store.
  detail::DirtySet dirty;
  double last_flush = 0;
  AgentUsage usage;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  double elapsed_before = 0;  // a resumed run: the wall seconds of the processes before this one
  int evaluations_at_process_start = 0;  // for the progress line's ETA
  Progress progress;
  bool replaying = false;   // jobs are answered from a recorded event log, never run

  double elapsed() const;
  int64_t next_seq() { return ++seq; }
  void event(const std::string& kind, nlohmann::json payload);
  /// The same, with the payload built by make() on the writer thread: the coordinator only
  /// moves the fields into the closure (JSON objects cost allocations per key).
  template <class Make>
  void event_lazy(const char* kind, Make make) {
    writer.write([seq = next_seq(), time = elapsed(), kind, make = std::move(make)](RunStore& st) mutable {
      st.append_event(EventRecord{seq, time, kind, make()});
    });
  }
  /// Makes the plan link of a node just added under `tree_parent` (the seed has none).
  void link_plan(const NodeRecord& n, int tree_parent);
  /// A view of a node for an agent call. Its pointers borrow what the State owns (shared_ptrs
  /// with no owner): an owning copy per view cost each agent call a score of atomic updates
  /// on cache lines the agent threads had just written, dropping their copies.
  NodeView view(const VariantGraph& g, int id) const;
  /// A child as a planner's `tried` list needs it: meta, result and the one plan that made
  /// it; no source, no history (a bushy node would otherwise copy every child's source).
  NodeView brief_view(const VariantGraph& g, int id) const;
  /// Queues the insert of a node just added (its meta: metas[n.id], shared with the closure
  /// and copied into the record on the writer thread). apply_agent writes its own rows.
  void add_node(const NodeRecord& n);
  const std::shared_ptr<const nlohmann::json>& meta(const VariantGraph& g, int id) const;
  /// Queues the writes of the dirty nodes' visit statistics and the dirty edges' visits.
  void flush(const VariantGraph& g);
  /// Queues a write of every node's mutable fields and marks every edge dirty (after a resume
  /// re-applied a muted event log).
  void rewrite_all(const VariantGraph& g);
};

}  // namespace kmcts

namespace kmcts::detail {

/// Creates the root from the problem's seed kernel and records it ("node" event).
void add_root(Coordinator::State& s, VariantGraph& g);
/// Starts a trial: bookkeeping and a "select" event; unless replaying, the agent call.
void start_agents(Coordinator::State& s, VariantGraph& g, Selection sel);
/// Makes the agent call of a trial a replayed log left open (resume), as the run would have.
void resume_agents(Coordinator::State& s, VariantGraph& g, const Selection& sel);
/// Counts an evaluation as started; unless replaying, compiles then measures on the pools.
/// `count`: false when evaluating again a variant whose measurement was lost (resume).
void start_evaluation(Coordinator::State& s, Selection sel, int node, std::shared_ptr<const std::string> source,
                      bool count = true);
void apply_agent(Coordinator::State& s, VariantGraph& g, AgentDone& d);
void apply_evaluation(Coordinator::State& s, VariantGraph& g, EvalDone& d);
/// A planner call's spare plans as its event records them ([{text, prior, data}]), and back; a
/// count (what logs before 2026-12-03 recorded) gives none.
nlohmann::json spare_plans_json(const std::vector<Plan>& plans);
std::vector<Plan> spare_plans_from_json(const nlohmann::json& recorded);
/// Appends to `shares` each spare plan's prior over the mean prior of its call (the plan taken
/// and the spares): NodeRecord::next_plan_share; 1 each where no prior is positive.
void queue_shares(std::vector<double>& shares, const Plan& taken, const std::vector<Plan>& spare);
/// The run's summary as summary.json holds it (status, counts, usage, seed, best) at this point.
nlohmann::json summarize(const Coordinator::State& s, const VariantGraph& g, const std::string& status,
                         const std::string& message);

}  // namespace kmcts::detail
