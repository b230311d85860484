#pragma once
// The three agent roles. Each has an offline rule implementation (agents/rule/) and,
// later, an LLM implementation; all register by name in the registries below.
// One instance serves the whole search and is called from several worker threads at
// once: implementations keep no per-call state (randomness comes in the context).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/eval_result.hpp"
#include "core/options.hpp"
#include "core/problem.hpp"
#include "core/registry.hpp"
#include "core/rng.hpp"
#include "agents/known_variants.hpp"

namespace kmcts {

/// The plans from the root to a node, as a chain: each node's link holds the plan that made it
/// and points to its tree parent's, so a node costs one link, whatever its depth.
struct PlanLink {
  std::shared_ptr<const PlanLink> parent;  // null: the root (or no plan above)
  std::string plan;
};

/// What an agent may know about one node of the variant graph.
struct NodeView {
  int id = -1;
  // Shared with the coordinator (views are made for every agent call: a copy would cost a
  // source per call); null in the brief views of a PlanContext's `tried` list.
  std::shared_ptr<const std::string> source_text;
  const std::string& source() const {
    static const std::string kNone;
    return source_text ? *source_text : kNone;
  }
  // e.g. {"params": {...}} from the rule coder; shared with the coordinator like the source
  // (a bushy node's planner context holds a view of every child); null = {}.
  std::shared_ptr<const nlohmann::json> meta_json;
  const nlohmann::json& meta() const {
    static const nlohmann::json kNone = nlohmann::json::object();
    return meta_json ? *meta_json : kNone;
  }
  void set_meta(nlohmann::json meta) { meta_json = std::make_shared<const nlohmann::json>(std::move(meta)); }
  std::shared_ptr<const EvalResult> result;         // null while pending (shared, never copied)
  // The plan that made this node, linked to those above it; shared with the coordinator (one
  // link per node); null = none (the seed).
  std::shared_ptr<const PlanLink> plan_link;
  /// Plans from the root to this node, oldest first (built from the links by the caller).
  std::vector<std::string> plan_history() const;
  // In a PlanContext's `tried` list, the edge from the node being expanded: its plan (a
  // transposition's plan is not the one that made the node it reached), whether it reached a
  // node made before (another plan's code, or an earlier kernel's), and whether that node is the
  // expanded one itself (the code written for the plan changed nothing).
  std::string edge_plan;
  bool reached_known = false, unchanged = false;
};

struct Plan {
  std::string text;      // human-readable: "TILE 32 -> 64"
  double prior = 1.0;    // relative preference; normalised by the caller (PUCT uses it)
  nlohmann::json data = nlohmann::json::object();  // machine-readable move, e.g. {"set": {...}}
};

/// Token and cost accounting of one agent call (zero for rule agents).
struct AgentUsage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t cached_tokens = 0;     // of the prompt tokens
  int64_t reasoning_tokens = 0;  // of the completion tokens
  double dollars = 0;
  int calls = 0;                 // LLM calls
  int retries = 0;               // failed attempts that were retried or gave up
  nlohmann::json llm_calls = nlohmann::json::array();  // one record per LLM call (llm::CallRecord)

  /// Adds the other's counters and appends its call records.
  void add(const AgentUsage& other);
  /// Adds the counters only (a run's totals keep no per-call records).
  void add_totals(const AgentUsage& other);
  /// The counters (not the call records), for event payloads; from_json reads them back.
  nlohmann::json totals() const;
  static AgentUsage from_totals(const nlohmann::json& j);
};

/// The process's LLM requests in flight and the reply bytes they have brought so far (none
/// for rule agents): the progress line shows a long generation arriving.
struct AgentActivity {
  int llm_requests = 0;
  int64_t llm_reply_bytes = 0;
};
AgentActivity agent_activity();

struct PlanContext {
  const Problem* problem = nullptr;
  NodeView parent;
  std::vector<NodeView> tried;          // children of parent already proposed (any verdict): meta,
                                        // result and the plan that made each; no source or history
  std::shared_ptr<const KnownVariants> known;  // points of every node in the graph (may be null)
  std::optional<NodeView> best;         // best node of the search so far
  int count = 1;                        // how many distinct plans to propose
  CounterRng rng{0, 0};
  // Improvements found before on similar problems, one line each (the optimisation archive's
  // entries the run took at its start: search/memory_archive.hpp); null or empty: none.
  const std::string* memory = nullptr;
};

struct PlanResult {
  std::vector<Plan> plans;  // may be fewer than asked (space exhausted) or empty
  AgentUsage usage;
  std::string error;        // why no plan came back, if none did
  /// Nothing more will ever come for this node (the rule planner ran out of moves): the
  /// search closes it. False for a failure that may pass (an LLM reply without plans).
  bool exhausted = false;
};

struct CodeResult {
  bool ok = false;
  std::string source;
  nlohmann::json meta = nlohmann::json::object();
  std::string error;  // why no source came back
  AgentUsage usage;
};

struct DebugContext {
  const Problem* problem = nullptr;
  NodeView failed;    // has result with the failure
  NodeView parent;    // the node it was derived from
  int attempt = 0;    // 0-based repair attempt on this lineage
  CounterRng rng{0, 0};
};

class Planner {
 public:
  virtual ~Planner() = default;
  virtual PlanResult propose(const PlanContext& context) = 0;
};

class Coder {
 public:
  virtual ~Coder() = default;
  virtual CodeResult write(const Problem& problem, const NodeView& parent, const Plan& plan) = 0;
};

class Debugger {
 public:
  virtual ~Debugger() = default;
  virtual CodeResult repair(const DebugContext& context) = 0;
};

using PlannerRegistry = Registry<Planner, const Config&>;
using CoderRegistry = Registry<Coder, const Config&>;
using DebuggerRegistry = Registry<Debugger, const Config&>;

}  // namespace kmcts
