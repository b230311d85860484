// The offline rule coder: applies a plan's {"set": {...}} to the parent's point and renders
// the problem's template there. It never guesses: a plan without "set", a parameter the
// space does not have, or a point outside the space is a CodeResult error.
#include <fmt/format.h>

#include "agents/roles.hpp"
#include "agents/rule/rule_common.hpp"

namespace kmcts::rule {
namespace {

class RuleCoder final : public Coder {
 public:
  explicit RuleCoder(const Config&) {}

  CodeResult write(const Problem& problem, const NodeView& parent, const Plan& plan) override {
    CodeResult r;
    const TunableSpace* space = space_of(&problem, "rule coder", r.error);
    if (!space) return r;
    std::optional<SpacePoint> point = params_of(parent, "rule coder", r.error);
    if (!point) return r;
    if (!plan.data.is_object() || !plan.data.contains("set") || !plan.data.at("set").is_object()) {
      r.error = fmt::format("rule coder: plan '{}' has no \"set\" object (not a rule planner move)", plan.text);
      return r;
    }
    for (const auto& [name, value] : plan.data.at("set").items()) {
      if (!space->find(name)) {
        r.error = fmt::format("rule coder: plan '{}' sets '{}', which is not a parameter of the space", plan.text, name);
        return r;
      }
      (*point)[name] = value;
    }
    return render_point(problem, *point, "rule coder");
  }
};

}  // namespace
}  // namespace kmcts::rule

KMCTS_REGISTER(kmcts::CoderRegistry, "rule", [](const kmcts::Config& config) -> std::unique_ptr<kmcts::Coder> {
  return std::make_unique<kmcts::rule::RuleCoder>(config);
})
