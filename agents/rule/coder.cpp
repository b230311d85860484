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
    return code_for_plan(problem, parent, plan, "rule coder");
  }
};

}  // namespace
}  // namespace kmcts::rule

KMCTS_REGISTER(kmcts::CoderRegistry, "rule", [](const kmcts::Config& config) -> std::unique_ptr<kmcts::Coder> {
  return std::make_unique<kmcts::rule::RuleCoder>(config);
})
