// The offline rule planner: local moves in the problem's tunable space.
//
// Candidate moves from the parent's point, in three pools:
//   step  one parameter to an adjacent value in its ordered list   prior 1.0
//   pair  two parameters, each to an adjacent value                 prior 0.5
//   jump  one parameter to a non-adjacent value                     prior 0.25
// Why these priors: the value lists are ordered (tile 8 < 16 < 32), so speed is roughly
// smooth along each axis and a single step is the move most likely to improve and the
// easiest to attribute; pairs exist because coupled parameters (a tile and the unroll that
// must divide it) often only move together, but there are O(P^2) of them, so each is worth
// less; jumps escape a local optimum and are the least informed guess.
// Each plan slot draws its pool (jump with agents.rule.jump_probability, pair with
// agents.rule.pair_probability, else step; an empty pool falls through to step, pair, jump)
// and then a move uniformly from it. Moves to invalid points (constraints) and to points
// already tried (the parent, its children, any node of the graph) are never proposed. Every draw comes from
// the context's counter-based rng, so the same context gives the same plans.
#include <fmt/format.h>

#include <array>
#include <cstdlib>
#include <set>

#include "agents/roles.hpp"
#include "agents/rule/rule_common.hpp"

KMCTS_OPTION("agents.rule.jump_probability", Double, 0.15, 0.0, 1.0,
             "Rule planner: chance that a plan jumps one parameter to a non-adjacent value (escapes local optima).")
KMCTS_OPTION("agents.rule.pair_probability", Double, 0.25, 0.0, 1.0,
             "Rule planner: chance that a plan steps two parameters at once (for coupled parameters).")

namespace kmcts::rule {
namespace {


enum Pool { kStep = 0, kPair = 1, kJump = 2 };
constexpr std::array<double, 3> kPrior = {1.0, 0.5, 0.25};
constexpr std::array<const char*, 3> kPoolName = {"step", "pair", "jump"};

// A candidate: the parent's point with one or two parameters moved (by index in their value
// lists), so that weighing a few hundred of them allocates nothing per candidate.
struct Move {
  Pool pool;
  int a = -1, value_a = -1;  // the parameter moved, and its new value's index
  int b = -1, value_b = -1;  // a pair's second parameter (-1 otherwise)
  void apply(TunableSpace::Indices& point) const {
    point[static_cast<size_t>(a)] = value_a;
    if (b >= 0) point[static_cast<size_t>(b)] = value_b;
  }
  void undo(TunableSpace::Indices& point, const TunableSpace::Indices& origin) const {
    point[static_cast<size_t>(a)] = origin[static_cast<size_t>(a)];
    if (b >= 0) point[static_cast<size_t>(b)] = origin[static_cast<size_t>(b)];
  }
};

class RulePlanner final : public SpacePlanner {
 public:
  explicit RulePlanner(const Config& config)
      : jump_probability_(config.get_double("agents.rule.jump_probability")),
        pair_probability_(config.get_double("agents.rule.pair_probability")) {}

 private:
  PlanResult plans_for(const PlanContext& context) override {
    PlanResult result;
    const TunableSpace* space = space_of(context.problem, "rule planner", result.error);
    if (!space) return result;
    std::optional<SpacePoint> start = params_of(context.parent, "rule planner", result.error);
    if (!start) return result;
    if (!space->valid(*start)) {
      result.error = fmt::format("rule planner: node {} has params {}, which are not a point of the space",
                                 context.parent.id, TunableSpace::to_json(*start).dump());
      return result;
    }
    const TunableSpace::Indices origin = *space->indices_of(*start);  // valid: a point of the space

    // Points already tried from here (the parent itself is no candidate: each moves something).
    std::set<TunableSpace::Indices> seen;
    for (const auto& child : context.tried) {
      std::string ignored;  // a tried child without params (e.g. an LLM child) excludes nothing
      if (auto p = params_of(child, "rule planner", ignored))
        if (auto indices = space->indices_of(*p)) seen.insert(std::move(*indices));  // other points match no candidate
    }

    std::array<std::vector<Move>, 3> pools;
    enumerate(*space, origin, seen, context.known.get(), pools);

    CounterRng rng = context.rng;
    for (int slot = 0; slot < context.count; ++slot) {
      Pool pool = choose_pool(rng.uniform(), pools);
      if (pools[pool].empty()) break;  // every pool is exhausted
      auto& moves = pools[pool];
      size_t pick = static_cast<size_t>(rng.below(moves.size()));
      result.plans.push_back(make_plan(*space, *start, origin, moves[pick]));
      moves.erase(moves.begin() + static_cast<std::ptrdiff_t>(pick));  // pools are disjoint: distinct plans
    }
    if (result.plans.empty())
      result.error = fmt::format("rule planner: every valid neighbour of node {} has been tried", context.parent.id);
    return result;
  }

  // Fills the three pools in space order (the order matters only for determinism).
  // `known`: points anywhere in the graph (no new information there); may be null.
  static void enumerate(const TunableSpace& space, const TunableSpace::Indices& origin,
                        const std::set<TunableSpace::Indices>& seen, const KnownVariants* known,
                        std::array<std::vector<Move>, 3>& pools) {
    TunableSpace::Indices point = origin;  // each candidate in turn: moved, weighed, moved back
    std::string key;
    auto offer = [&](const Move& move) {
      move.apply(point);
      bool fresh = !seen.count(point) && space.valid_at(point);
      if (fresh && known) {
        key.clear();
        space.append_point_text(point, key);
        fresh = !known->contains_key(key);
      }
      if (fresh) pools[move.pool].push_back(move);
      move.undo(point, origin);
    };
    const auto& params = space.params();
    const int n = static_cast<int>(params.size());
    auto values = [&](int param) { return static_cast<int>(params[static_cast<size_t>(param)].values.size()); };
    for (int a = 0; a < n; ++a) {
      const int ia = origin[static_cast<size_t>(a)];
      for (int va : {ia - 1, ia + 1}) {  // the adjacent values, in list order
        if (va < 0 || va >= values(a)) continue;
        offer(Move{kStep, a, va});
        for (int b = a + 1; b < n; ++b) {
          const int ib = origin[static_cast<size_t>(b)];
          for (int vb : {ib - 1, ib + 1})
            if (vb >= 0 && vb < values(b)) offer(Move{kPair, a, va, b, vb});
        }
      }
      for (int k = 0; k < values(a); ++k)
        if (std::abs(k - ia) > 1) offer(Move{kJump, a, k});  // not itself, not a step
    }
  }

  Pool choose_pool(double u, const std::array<std::vector<Move>, 3>& pools) const {
    Pool wanted = u < jump_probability_ ? kJump : u < jump_probability_ + pair_probability_ ? kPair : kStep;
    if (!pools[wanted].empty()) return wanted;
    for (Pool p : {kStep, kPair, kJump})
      if (!pools[p].empty()) return p;
    return wanted;
  }

  static Plan make_plan(const TunableSpace& space, const SpacePoint& start, const TunableSpace::Indices& origin,
                        const Move& move) {
    TunableSpace::Indices moved = origin;
    move.apply(moved);
    return plan_between(space, start, space.point_at(moved), kPrior[move.pool], kPoolName[move.pool]);
  }

  double jump_probability_;
  double pair_probability_;
};

}  // namespace
}  // namespace kmcts::rule

KMCTS_REGISTER(kmcts::PlannerRegistry, "rule",
               [](const kmcts::Config& config) -> std::unique_ptr<kmcts::Planner> {
                 return std::make_unique<kmcts::rule::RulePlanner>(config);
               })
