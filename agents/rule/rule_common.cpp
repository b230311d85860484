#include "agents/rule/rule_common.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace kmcts::rule {

const TunableSpace* space_of(const Problem* problem, const std::string& role, std::string& error) {
  if (!problem) {
    error = role + ": no problem given";
    return nullptr;
  }
  if (!problem->space || !problem->template_source) {
    error = fmt::format("{}: problem '{}' has no template and space; the rule agents only move in a tunable space",
                        role, problem->name);
    return nullptr;
  }
  return &*problem->space;
}

std::optional<SpacePoint> params_of(const NodeView& node, const std::string& role, std::string& error) {
  const nlohmann::json& meta = node.meta();
  if (!meta.is_object() || !meta.contains("params")) {
    error = fmt::format("{}: node {} has no 'params' in its meta (it was not written by the rule coder)", role, node.id);
    return std::nullopt;
  }
  try {
    return TunableSpace::point_from_json(meta.at("params"));
  } catch (const InputError& e) {
    error = fmt::format("{}: node {}: {}", role, node.id, e.what());
    return std::nullopt;
  }
}

namespace {
std::string value_text(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }
}  // namespace

std::vector<std::string> changed_params(const TunableSpace& space, const SpacePoint& a, const SpacePoint& b) {
  std::vector<std::string> out;
  for (const auto& p : space.params()) {
    auto ia = a.find(p.name), ib = b.find(p.name);
    bool in_a = ia != a.end(), in_b = ib != b.end();
    if (in_a != in_b || (in_a && ia->second != ib->second)) out.push_back(p.name);
  }
  return out;
}

std::string describe_move(const TunableSpace& space, const SpacePoint& from, const SpacePoint& to) {
  std::string text;
  for (const auto& name : changed_params(space, from, to)) {
    auto f = from.find(name), t = to.find(name);
    text += fmt::format("{}{} {} -> {}", text.empty() ? "" : ", ", name, f == from.end() ? "?" : value_text(f->second),
                        t == to.end() ? "?" : value_text(t->second));
  }
  return text.empty() ? "no change" : text;
}

CodeResult render_point(const Problem& problem, const SpacePoint& point, const std::string& role,
                        const nlohmann::json& extra_meta) {
  CodeResult r;
  std::string error;
  const TunableSpace* space = space_of(&problem, role, error);
  if (!space) {
    r.error = error;
    return r;
  }
  if (!space->valid(point)) {
    r.error = fmt::format("{}: point {} is not in the space (a value is not listed or a constraint fails)", role,
                          TunableSpace::to_json(point).dump());
    return r;
  }
  try {
    r.source = space->render(*problem.template_source, point);
  } catch (const InputError& e) {
    r.error = fmt::format("{}: {}", role, e.what());
    return r;
  }
  r.ok = true;
  r.meta = extra_meta.is_object() ? extra_meta : nlohmann::json::object();
  r.meta["params"] = TunableSpace::to_json(point);
  return r;
}

}  // namespace kmcts::rule

namespace kmcts::rule {

Plan plan_between(const TunableSpace& space, const SpacePoint& from, const SpacePoint& to, double prior,
                  const char* move) {
  Plan plan;
  plan.text = describe_move(space, from, to);
  plan.prior = prior;
  nlohmann::json set = nlohmann::json::object(), old = nlohmann::json::object();
  for (const auto& name : changed_params(space, from, to)) {
    set[name] = to.at(name);
    old[name] = from.at(name);
  }
  plan.data = {{"set", set}, {"from", old}, {"move", move}};
  return plan;
}

CodeResult code_for_plan(const Problem& problem, const NodeView& parent, const Plan& plan, const std::string& role) {
  CodeResult r;
  const TunableSpace* space = space_of(&problem, role, r.error);
  if (!space) return r;
  std::optional<SpacePoint> point = params_of(parent, role, r.error);
  if (!point) return r;
  if (!plan.data.is_object() || !plan.data.contains("set") || !plan.data.at("set").is_object()) {
    r.error = fmt::format("{}: plan '{}' has no \"set\" object (not a rule planner move)", role, plan.text);
    return r;
  }
  for (const auto& [name, value] : plan.data.at("set").items()) {
    if (!space->find(name)) {
      r.error = fmt::format("{}: plan '{}' sets '{}', which is not a parameter of the space", role, plan.text, name);
      return r;
    }
    (*point)[name] = value;
  }
  return render_point(problem, *point, role);
}

}  // namespace kmcts::rule
