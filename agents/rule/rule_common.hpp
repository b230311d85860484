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

/// Renders `point` with the problem's template; meta gets {"params": point} plus `extra`.
/// An invalid point or a render failure is a CodeResult error.
CodeResult render_point(const Problem& problem, const SpacePoint& point, const std::string& role,
                        const nlohmann::json& extra_meta = nlohmann::json::object());

}  // namespace kmcts::rule
