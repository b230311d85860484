#include "search/records.hpp"

#include <stdexcept>

namespace kmcts {

const char* to_string(NodeStatus s) {
  switch (s) {
    case NodeStatus::pending: return "pending";
    case NodeStatus::ok: return "ok";
    case NodeStatus::failed: return "failed";
  }
  return "?";  // unreachable for valid enum values; keeps -Wreturn-type quiet
}

NodeStatus node_status_from_string(const std::string& s) {
  if (s == "pending") return NodeStatus::pending;
  if (s == "ok") return NodeStatus::ok;
  if (s == "failed") return NodeStatus::failed;
  throw std::invalid_argument("unknown node status \"" + s + "\" (known: pending, ok, failed)");
}

const char* to_string(EdgeKind k) {
  switch (k) {
    case EdgeKind::expand: return "expand";
    case EdgeKind::debug: return "debug";
  }
  return "?";
}

EdgeKind edge_kind_from_string(const std::string& s) {
  if (s == "expand") return EdgeKind::expand;
  if (s == "debug") return EdgeKind::debug;
  throw std::invalid_argument("unknown edge kind \"" + s + "\" (known: expand, debug)");
}

nlohmann::json to_json(const NodeRecord& n) {
  return {{"id", n.id},
          {"hash", n.hash},
          {"status", to_string(n.status)},
          {"verdict", n.verdict},
          {"origin", n.origin},
          {"depth", n.depth},
          {"speedup", n.speedup},
          {"median_ns", n.median_ns},
          {"reward", n.reward},
          {"visits", n.visits},
          {"value_sum", n.value_sum},
          {"debug_attempts", n.debug_attempts},
          {"meta", n.meta},
          {"plan", n.plan},
          {"created_seq", n.created_seq}};
}

nlohmann::json to_json(const EdgeRecord& e) {
  return {{"parent", e.parent},
          {"child", e.child},
          {"kind", to_string(e.kind)},
          {"plan", e.plan},
          {"plan_data", e.plan_data},
          {"transposition", e.transposition},
          {"visits", e.visits},
          {"seq", e.seq}};
}

double prior_of_plan_data(const nlohmann::json& plan_data) {
  if (!plan_data.is_object()) return 1.0;
  auto it = plan_data.find("prior");
  return it != plan_data.end() && it->is_number() ? it->get<double>() : 1.0;
}

}  // namespace kmcts
