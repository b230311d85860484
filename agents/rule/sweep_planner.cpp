// The sweep planner: every valid point of the problem's tunable space, once each, in a fixed
// order (mixed radix over the parameters as space.json lists them, the first slowest).
// With any strategy and a budget of at least the space's size, a search becomes an
// exhaustive sweep: the brute-force baseline of autotuners, and the way to record a whole
// landscape for the replay evaluator (`kmcts run ... --set agents.planner=sweep`).
//
// Each plan sets every parameter, so it does not depend on the node it expands. The planner
// keeps a cursor: a point is handed out once, then skipped, as is any point already in the
// graph (a resumed run starts from the beginning again and skips what the graph holds).
#include <fmt/format.h>

#include <mutex>

#include "agents/roles.hpp"
#include "agents/rule/rule_common.hpp"

namespace kmcts::rule {
namespace {

using nlohmann::json;

class SweepPlanner final : public SpacePlanner {
 public:
  explicit SweepPlanner(const Config&) {}

 private:
  PlanResult plans_for(const PlanContext& context) override {
    PlanResult result;
    const TunableSpace* space = space_of(context.problem, "sweep planner", result.error);
    if (!space) return result;
    const auto& params = space->params();
    uint64_t total = 1;
    for (const auto& p : params) total *= p.values.size();
    std::lock_guard lock(mutex_);
    while (cursor_ < total && static_cast<int>(result.plans.size()) < context.count) {
      SpacePoint point = point_at(*space, cursor_++);
      if (!space->valid(point)) continue;
      json params_json = TunableSpace::to_json(point);
      if (context.known && context.known->contains(params_json)) continue;
      Plan plan;
      plan.text = fmt::format("sweep point {} of {}: {}", cursor_, total, describe(point));
      plan.data = {{"set", params_json}, {"move", "sweep"}};
      result.plans.push_back(std::move(plan));
    }
    if (result.plans.empty()) result.error = fmt::format("sweep planner: all {} points of the space were handed out", total);
    return result;
  }

  // Point number i, the last parameter fastest.
  static SpacePoint point_at(const TunableSpace& space, uint64_t i) {
    SpacePoint p;
    const auto& params = space.params();
    for (auto it = params.rbegin(); it != params.rend(); ++it) {
      p[it->name] = it->values[i % it->values.size()];
      i /= it->values.size();
    }
    return p;
  }

  static std::string describe(const SpacePoint& point) {
    std::string out;
    for (const auto& [name, value] : point) out += fmt::format("{}{}={}", out.empty() ? "" : " ", name, value.is_string() ? value.get<std::string>() : value.dump());
    return out;
  }

  std::mutex mutex_;
  uint64_t cursor_ = 0;  // the next point number to look at
};

}  // namespace
}  // namespace kmcts::rule

KMCTS_REGISTER(kmcts::PlannerRegistry, "sweep",
               [](const kmcts::Config& config) -> std::unique_ptr<kmcts::Planner> {
                 return std::make_unique<kmcts::rule::SweepPlanner>(config);
               })
