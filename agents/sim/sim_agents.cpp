// The agent simulator (agents.backend=sim): offline agents that propose children the way an LLM
// does, not the way the rule agents do, so that strategies can be compared on landscapes that
// look like LLM search (bench/search_quality) without a model or a GPU.
//
// Planner: each plan slot draws its kind, with shares the user sets (agents.sim.*_share,
// normalised):
//   local       one parameter to an adjacent value                          prior 1.0
//   jump        2..agents.sim.jump_params parameters, each to a random value  prior 0.5
//   regression  a parameter the parent moved away from the seed's value, set
//               back to it (the naive version an LLM often falls back to)     prior 0.5
// It avoids the parent's own point and the children already tried from it (an LLM sees its
// tried list), but, unlike the rule planner, not the rest of the graph: proposals may reach
// variants made elsewhere (transpositions), as LLM proposals do.
// Coder: the rule coder's rendering of the plan, which then fails to compile with probability
// agents.sim.compile_failure and computes a wrong answer with agents.sim.wrong_answer (the
// defect is a line of the source: core/simulated_defect.hpp). Reported first-attempt failure
// rates of LLM kernels on KernelBench lie around 30-60%.
// Debugger: a simulated defect is repaired with probability agents.sim.repair (the intended
// source, clean), else the attempt stays broken (a new source: the defect line names the
// attempt); a failure of the landscape itself (its failing regions) goes to the rule debugger.
// Every draw comes from the call's context rng, or, for the coder, which has none, from the
// parent's source, the plan and search.seed: the same search replays the same way.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <set>

#include "agents/roles.hpp"
#include "agents/rule/rule_common.hpp"
#include "core/simulated_defect.hpp"

KMCTS_OPTION("agents.sim.local_share", Double, 0.6, 0.0, 1.0,
             "Agent simulator: share of plans that move one parameter to an adjacent value (refinements)")
KMCTS_OPTION("agents.sim.jump_share", Double, 0.25, 0.0, 1.0,
             "Agent simulator: share of plans that set several parameters to random values (rewrites)")
KMCTS_OPTION("agents.sim.regression_share", Double, 0.15, 0.0, 1.0,
             "Agent simulator: share of plans that set a parameter back to the seed's value (regressions)")
KMCTS_OPTION("agents.sim.jump_params", Int, 3, 2, 64, "Agent simulator: most parameters a jump changes")
KMCTS_OPTION("agents.sim.compile_failure", Double, 0.3, 0.0, 1.0,
             "Agent simulator: chance that the code written for a plan does not compile")
KMCTS_OPTION("agents.sim.wrong_answer", Double, 0.1, 0.0, 1.0,
             "Agent simulator: chance that the code written for a plan compiles but computes a wrong answer")
KMCTS_OPTION("agents.sim.repair", Double, 0.6, 0.0, 1.0,
             "Agent simulator: chance that one repair attempt fixes a simulated defect")

namespace kmcts::sim {
namespace {

using rule::params_of;
using rule::space_of;

enum Kind { kLocal = 0, kJump = 1, kRegression = 2 };
constexpr std::array<const char*, 3> kKindName = {"local", "jump", "regression"};
constexpr std::array<double, 3> kPrior = {1.0, 0.5, 0.5};
constexpr int kTriesPerPlan = 32;  // random proposals tried before a slot is given up

class SimPlanner final : public rule::SpacePlanner {
 public:
  explicit SimPlanner(const Config& c) : jump_params_(static_cast<int>(c.get_int("agents.sim.jump_params"))) {
    const double local = c.get_double("agents.sim.local_share"), jump = c.get_double("agents.sim.jump_share"),
                 regression = c.get_double("agents.sim.regression_share");
    const double total = local + jump + regression;
    if (total <= 0) throw InputError("agents.sim: local_share, jump_share and regression_share are all 0");
    share_ = {local / total, jump / total, regression / total};
  }

 private:
  PlanResult plans_for(const PlanContext& context) override {
    PlanResult result;
    const TunableSpace* space = space_of(context.problem, "simulated planner", result.error);
    if (!space) return result;
    std::optional<SpacePoint> start = params_of(context.parent, "simulated planner", result.error);
    if (!start) return result;
    const std::optional<TunableSpace::Indices> origin = space->indices_of(*start);
    if (!origin) {
      result.error = fmt::format("simulated planner: node {} is not a point of the space", context.parent.id);
      return result;
    }
    const TunableSpace::Indices seed = *space->indices_of(space->default_point());
    std::set<TunableSpace::Indices> seen = {*origin};
    for (const auto& child : context.tried) {
      std::string ignored;
      if (auto p = params_of(child, "simulated planner", ignored))
        if (auto indices = space->indices_of(*p)) seen.insert(std::move(*indices));
    }
    CounterRng rng = context.rng;
    for (int slot = 0; slot < context.count; ++slot) {
      const double u = rng.uniform();
      const Kind kind = u < share_[kLocal] ? kLocal : u < share_[kLocal] + share_[kJump] ? kJump : kRegression;
      for (int attempt = 0; attempt < kTriesPerPlan; ++attempt) {
        TunableSpace::Indices point = propose(*space, *origin, seed, kind, rng);
        if (seen.count(point) || !space->valid_at(point)) continue;
        seen.insert(point);
        result.plans.push_back(rule::plan_between(*space, *start, space->point_at(point), kPrior[kind], kKindName[kind]));
        break;
      }
    }
    if (result.plans.empty())
      result.error = fmt::format("simulated planner: no new valid point found near node {}", context.parent.id);
    return result;
  }

  TunableSpace::Indices propose(const TunableSpace& space, const TunableSpace::Indices& origin,
                                const TunableSpace::Indices& seed, Kind kind, CounterRng& rng) const {
    TunableSpace::Indices point = origin;
    const auto& params = space.params();
    const auto values = [&](size_t p) { return static_cast<int>(params[p].values.size()); };
    if (kind == kRegression) {
      std::vector<size_t> moved;
      for (size_t p = 0; p < params.size(); ++p)
        if (origin[p] != seed[p]) moved.push_back(p);
      if (!moved.empty()) {
        const size_t p = moved[static_cast<size_t>(rng.below(moved.size()))];
        point[p] = seed[p];
        return point;
      }
      kind = kLocal;  // at the seed's point: nothing to fall back to
    }
    if (kind == kLocal) {
      const size_t p = static_cast<size_t>(rng.below(params.size()));
      point[p] += rng.uniform() < 0.5 ? -1 : 1;
      point[p] = std::clamp(point[p], 0, values(p) - 1);
      return point;
    }
    const int most = std::min<int>(jump_params_, static_cast<int>(params.size()));
    const int count = most <= 2 ? most : 2 + static_cast<int>(rng.below(static_cast<uint64_t>(most - 1)));
    for (int k = 0; k < count; ++k) {
      const size_t p = static_cast<size_t>(rng.below(params.size()));
      point[p] = static_cast<int>(rng.below(static_cast<uint64_t>(values(p))));
    }
    return point;
  }

  std::array<double, 3> share_{};
  int jump_params_;
};

class SimCoder final : public Coder {
 public:
  explicit SimCoder(const Config& c)
      : compile_failure_(c.get_double("agents.sim.compile_failure")),
        wrong_answer_(c.get_double("agents.sim.wrong_answer")),
        seed_(static_cast<uint64_t>(c.get_int("search.seed"))) {}

  CodeResult write(const Problem& problem, const NodeView& parent, const Plan& plan) override {
    CodeResult r = rule::code_for_plan(problem, parent, plan, "simulated coder");
    if (!r.ok) return r;
    CounterRng rng(seed_ ^ string_key(parent.source()), string_key(plan.text));
    const double u = rng.uniform();
    const Defect defect = u < compile_failure_                  ? Defect::compile_error
                          : u < compile_failure_ + wrong_answer_ ? Defect::wrong_answer
                                                                 : Defect::none;
    r.source = with_defect(r.source, defect, 0);
    if (defect != Defect::none) r.meta["simulated_defect"] = to_string(defect);
    return r;
  }

 private:
  double compile_failure_, wrong_answer_;
  uint64_t seed_;
};

class SimDebugger final : public Debugger {
 public:
  explicit SimDebugger(const Config& c)
      : repair_(c.get_double("agents.sim.repair")), rule_(DebuggerRegistry::instance().create("debugger", "rule", c)) {}

  CodeResult repair(const DebugContext& context) override {
    const std::string& failed = context.failed.source();
    const Defect defect = defect_of(failed);
    if (defect == Defect::none) return rule_->repair(context);  // the landscape's own failure
    CodeResult r;
    r.ok = true;
    r.meta = context.failed.meta();
    CounterRng rng = context.rng;
    if (rng.uniform() < repair_) {
      r.source = without_defect(failed);
      r.meta.erase("simulated_defect");
    } else {
      r.source = with_defect(without_defect(failed), defect, context.attempt + 1);
    }
    return r;
  }

 private:
  double repair_;
  std::unique_ptr<Debugger> rule_;
};

}  // namespace
}  // namespace kmcts::sim

KMCTS_REGISTER(kmcts::PlannerRegistry, "sim", [](const kmcts::Config& c) -> std::unique_ptr<kmcts::Planner> {
  return std::make_unique<kmcts::sim::SimPlanner>(c);
})
KMCTS_REGISTER(kmcts::CoderRegistry, "sim", [](const kmcts::Config& c) -> std::unique_ptr<kmcts::Coder> {
  return std::make_unique<kmcts::sim::SimCoder>(c);
})
KMCTS_REGISTER(kmcts::DebuggerRegistry, "sim", [](const kmcts::Config& c) -> std::unique_ptr<kmcts::Debugger> {
  return std::make_unique<kmcts::sim::SimDebugger>(c);
})
