#pragma once
// Helpers shared by the offline rule agents (planner, coder, debugger). They all work on
// points of the problem's TunableSpace, carried in each node's meta as {"params": {...}}.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "agents/roles.hpp"
#include "core/space.hpp"

namespace kmcts::rule {

/// The problem's space, or nullptr with `error` set (a problem without a template+space
/// gives the rule agents nothing to move in; that is a result, not an exception).
const TunableSpace* space_of(const Problem* problem, const std::string& role, std::string& error);

/// The node's point from meta["params"], or nullopt with `error` set.
std::optional<SpacePoint> params_of(const NodeView& node, const std::string& role, std::string& error);

/// "TILE 16 -> 32, UNROLL 2 -> 4": every parameter whose value differs, in space order.
std::string describe_move(const TunableSpace& space, const SpacePoint& from, const SpacePoint& to);

/// Parameters whose values differ between two points, in space order.
std::vector<std::string> changed_params(const TunableSpace& space, const SpacePoint& a, const SpacePoint& b);

/// A planner over the tunable space. Its answers depend only on the space and the graph, so
/// an empty answer (no space, no params, every move tried) is final for the node: it is
/// marked exhausted and the search closes the node.
class SpacePlanner : public Planner {
 public:
  PlanResult propose(const PlanContext& context) final {
    PlanResult result = plans_for(context);
    result.exhausted = result.plans.empty();
    return result;
  }

 protected:
  virtual PlanResult plans_for(const PlanContext& context) = 0;
};

/// The plan that moves `from` to `to`: its text ("TILE 16 -> 32"), `prior`, and data
/// {"set": new values, "from": old values, "move": `move`} of the parameters that differ.
Plan plan_between(const TunableSpace& space, const SpacePoint& from, const SpacePoint& to, double prior,
                  const char* move);

/// The parent's point with the plan's {"set": {...}} applied, rendered (what the rule coder
/// writes). A plan without "set", or a parameter the space does not have, is a CodeResult error.
CodeResult code_for_plan(const Problem& problem, const NodeView& parent, const Plan& plan, const std::string& role);

/// Renders `point` with the problem's template; meta gets {"params": point} plus `extra`.
/// An invalid point or a render failure is a CodeResult error.
CodeResult render_point(const Problem& problem, const SpacePoint& point, const std::string& role,
                        const nlohmann::json& extra_meta = nlohmann::json::object());

}  // namespace kmcts::rule
