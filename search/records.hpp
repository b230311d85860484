#pragma once
// Plain records of a run, as the coordinator applies them and the run store keeps them.
// The graph, the store, the exports and `kmcts show` all speak in these.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/eval_result.hpp"

namespace kmcts {

enum class NodeStatus { pending, ok, failed };
const char* to_string(NodeStatus s);
NodeStatus node_status_from_string(const std::string& s);

// Every field has a default initializer, so that designated initializers may leave any out
// (the hot paths name meta and plan_data: their default allocates an empty JSON object).
struct NodeRecord {
  // The fields a descent and a backup read come first, together: a 10^5-node graph does not
  // stay in cache, and each child a descent looks at then costs fewer cache lines.
  int id = -1;               // 0 is the seed kernel (the root)
  NodeStatus status = NodeStatus::pending;
  int visits = 0;            // MCTS node visits (backups through it)
  int debug_attempts = 0;    // repairs tried on this node
  double value_sum = 0;      // sum of backed-up rewards
  double reward = 0;         // this node's own reward once evaluated
  double speedup = 0;        // vs the reference, when ok
  double median_ns = 0;      // candidate median, when ok
  int depth = 0;             // along the first path that reached it
  std::string hash{};        // sha256 of the canonical source
  std::string verdict{};     // to_string(Verdict) once evaluated
  std::string origin{};      // "seed" | "expand" | "debug"
  nlohmann::json meta = nlohmann::json::object();  // e.g. {"params": {...}}
  std::string plan{};        // the plan text of the edge that created it ("" for the root)
  int64_t created_seq = 0;   // event sequence number that created it
  // The Planner's prior for the plan this node's next expansion will take (a spare plan of an
  // earlier call, queued), over the mean prior of the plans that call proposed: above 1 the
  // Planner preferred it to its average plan. 0: none queued (the next expansion asks the
  // Planner again). Kept by the coordinator, rebuilt by a replay; search.expansion=thompson reads it.
  double next_plan_share = 0;
};

enum class EdgeKind { expand, debug };
const char* to_string(EdgeKind k);
EdgeKind edge_kind_from_string(const std::string& s);

struct EdgeRecord {
  int parent = -1;
  int child = -1;
  EdgeKind kind = EdgeKind::expand;
  int visits = 0;            // selections through this edge (kept apart from node visits)
  // The Planner's prior, as plan_data["prior"] holds it (1 without one): kept as a number
  // too, so selection does not look it up in JSON for every candidate of every descent.
  double prior = 1.0;
  bool transposition = false;  // the child already existed when this edge was added
  std::string plan{};        // plan text (or "repair: ..." for debug edges)
  nlohmann::json plan_data = nlohmann::json::object();
  int64_t seq = 0;
};

/// EdgeRecord::prior from plan data: plan_data["prior"] when it is a number, else 1.
double prior_of_plan_data(const nlohmann::json& plan_data);

struct EvaluationRecord {
  int node = -1;
  int64_t seq = 0;
  EvalResult result;
};

struct EventRecord {
  int64_t seq = 0;
  double time_s = 0;         // seconds since the run started
  std::string kind;          // "node", "edge", "evaluation", "expansion_failed", "budget", ...
  nlohmann::json payload = nlohmann::json::object();
};

nlohmann::json to_json(const NodeRecord& n);
nlohmann::json to_json(const EdgeRecord& e);

}  // namespace kmcts
