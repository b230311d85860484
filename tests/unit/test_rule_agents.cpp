// The offline rule agents: the planner proposes distinct, valid, deterministic local moves
// and skips tried points; the coder renders them; the debugger reverts the culprit.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <string>

#include "agents/known_variants.hpp"
#include "agents/roles.hpp"
#include "core/space.hpp"

namespace kmcts {
namespace {

using nlohmann::json;

// A small problem held in memory: 4 x 4 x 2 = 32 points, one constraint.
Problem tiny_problem() {
  Problem p;
  p.name = "tiny";
  p.kind = "cpu";
  p.space = TunableSpace::from_json(json::parse(R"({
    "params": [
      {"name": "TILE", "values": [8, 16, 32, 64]},
      {"name": "UNROLL", "values": [1, 2, 4, 8]},
      {"name": "ORDER", "values": ["ijk", "ikj"]}
    ],
    "constraints": ["TILE % UNROLL == 0", "TILE * UNROLL <= 256"],
    "default": {"TILE": 16, "UNROLL": 2, "ORDER": "ijk"}
  })"),
                                    "tiny/space.json");
  p.template_source = "// order {{ORDER}}\nconstexpr int TILE = {{TILE}};\nconstexpr int UNROLL = {{UNROLL}};\n";
  p.seed_source = p.space->render(*p.template_source, p.space->default_point());
  p.seed_meta = {{"params", TunableSpace::to_json(p.space->default_point())}};
  return p;
}

NodeView node(int id, const json& params) {
  NodeView n;
  n.id = id;
  n.set_meta({{"params", params}});
  return n;
}

PlanContext context_for(const Problem& p, int count, uint64_t key) {
  PlanContext c;
  c.problem = &p;
  c.parent = node(0, p.seed_meta.at("params"));
  c.count = count;
  c.rng = CounterRng(42, key);
  return c;
}

// Applies a plan's "set" to a point, as the coder does.
SpacePoint apply_plan(SpacePoint point, const Plan& plan) {
  for (const auto& [k, v] : plan.data.at("set").items()) point[k] = v;
  return point;
}

EvalResult failure(Verdict v, const std::string& message, const std::string& log = "") {
  EvalResult r;
  r.verdict = v;
  r.message = message;
  r.log = log;
  return r;
}

}  // namespace

TEST_CASE("rule agents are registered by name") {
  CHECK(PlannerRegistry::instance().contains("rule"));
  CHECK(CoderRegistry::instance().contains("rule"));
  CHECK(DebuggerRegistry::instance().contains("rule"));
}

TEST_CASE("rule planner: distinct, valid moves of one or two parameters with readable text") {
  Problem p = tiny_problem();
  Config config;
  auto planner = PlannerRegistry::instance().create("planner", "rule", config);
  PlanResult r = planner->propose(context_for(p, 8, 7));
  REQUIRE(r.plans.size() == 8);
  CHECK(r.error.empty());
  SpacePoint start = p.space->default_point();
  std::set<SpacePoint> points;
  for (const Plan& plan : r.plans) {
    SpacePoint q = apply_plan(start, plan);
    CHECK(p.space->valid(q));
    CHECK(q != start);
    points.insert(q);
    size_t changed = plan.data.at("set").size();
    CHECK((changed == 1 || changed == 2));
    CHECK(plan.data.at("from").size() == changed);
    for (const auto& [k, v] : plan.data.at("from").items()) CHECK(start.at(k) == v);
    CHECK(plan.prior > 0);
    CHECK(plan.text.find(" -> ") != std::string::npos);
    std::string move = plan.data.at("move");
    CHECK(plan.prior == doctest::Approx(move == "step" ? 1.0 : move == "pair" ? 0.5 : 0.25));
  }
  CHECK(points.size() == r.plans.size());
}

TEST_CASE("rule planner: text names old and new values") {
  Problem p = tiny_problem();
  Config config;
  config.set_value("agents.rule.jump_probability", 0.0, "test");
  config.set_value("agents.rule.pair_probability", 0.0, "test");
  auto planner = PlannerRegistry::instance().create("planner", "rule", config);
  // Steps only: TILE 16 -> 8 | 32, UNROLL 2 -> 1 | 4, ORDER ijk -> ikj.
  PlanResult r = planner->propose(context_for(p, 5, 1));
  std::set<std::string> texts;
  for (const Plan& plan : r.plans) texts.insert(plan.text);
  CHECK(texts == std::set<std::string>{"TILE 16 -> 8", "TILE 16 -> 32", "UNROLL 2 -> 1", "UNROLL 2 -> 4",
                                       "ORDER ijk -> ikj"});
  PlanResult pair = PlannerRegistry::instance().create("planner", "rule", config)->propose(context_for(p, 6, 1));
  CHECK(pair.plans.size() == 6);  // steps exhausted: falls through to pairs
  CHECK(pair.plans[5].data.at("set").size() == 2);
  CHECK(pair.plans[5].text.find(", ") != std::string::npos);
}

TEST_CASE("rule planner: same context gives the same plans; another key differs") {
  Problem p = tiny_problem();
  Config config;
  auto planner = PlannerRegistry::instance().create("planner", "rule", config);
  auto texts = [&](uint64_t key) {
    std::vector<std::string> out;
    for (const Plan& plan : planner->propose(context_for(p, 6, key)).plans) out.push_back(plan.text);
    return out;
  };
  CHECK(texts(3) == texts(3));
  bool some_differ = false;
  for (uint64_t key = 4; key < 12; ++key) some_differ |= texts(key) != texts(3);
  CHECK(some_differ);
}

TEST_CASE("rule planner: skips tried points and reports exhaustion") {
  Problem p = tiny_problem();
  Config config;
  auto planner = PlannerRegistry::instance().create("planner", "rule", config);
  PlanContext c = context_for(p, 1000, 9);
  PlanResult all = planner->propose(c);
  REQUIRE(!all.plans.empty());
  CHECK(all.plans.size() < 1000);

  // Mark half of them tried: none of those may come back.
  SpacePoint start = p.space->default_point();
  std::set<SpacePoint> tried;
  for (size_t i = 0; i < all.plans.size(); i += 2) {
    SpacePoint q = apply_plan(start, all.plans[i]);
    tried.insert(q);
    c.tried.push_back(node(static_cast<int>(i) + 1, TunableSpace::to_json(q)));
  }
  PlanResult rest = planner->propose(c);
  CHECK(rest.plans.size() == all.plans.size() - tried.size());
  for (const Plan& plan : rest.plans) CHECK(tried.count(apply_plan(start, plan)) == 0);

  // Everything tried: no plans, an error that says why.
  for (const Plan& plan : rest.plans) c.tried.push_back(node(99, TunableSpace::to_json(apply_plan(start, plan))));
  PlanResult none = planner->propose(c);
  CHECK(none.plans.empty());
  CHECK(none.error.find("tried") != std::string::npos);
}

TEST_CASE("rule planner: asked for enough plans, proposes every valid step, pair and jump once (brute force)") {
  Problem p = tiny_problem();
  const TunableSpace& space = *p.space;
  const SpacePoint start = space.default_point();
  // Each point of the space, classified by hand: one parameter moved to an adjacent value is a
  // step, to another value a jump; two parameters each moved to an adjacent value, a pair.
  std::map<SpacePoint, std::string> expected;
  space.for_each_point([&](const SpacePoint& q) {
    if (!space.valid(q)) return;
    int moved = 0, adjacent = 0;
    for (const auto& param : space.params()) {
      const int from = space.index_of(param.name, start.at(param.name)), to = space.index_of(param.name, q.at(param.name));
      moved += from != to;
      adjacent += std::abs(from - to) == 1;
    }
    if (moved == 1) expected[q] = adjacent == 1 ? "step" : "jump";
    if (moved == 2 && adjacent == 2) expected[q] = "pair";
  });
  REQUIRE(expected.size() > 5);
  PlanResult all = PlannerRegistry::instance().create("planner", "rule", Config())->propose(context_for(p, 1000, 5));
  std::map<SpacePoint, std::string> proposed;
  for (const Plan& plan : all.plans) proposed[apply_plan(start, plan)] = plan.data.at("move").get<std::string>();
  CHECK(all.plans.size() == proposed.size());
  CHECK(proposed == expected);
}

TEST_CASE("rule planner: skips points known anywhere in the graph, not only the parent's children") {
  Problem p = tiny_problem();
  PlanContext c = context_for(p, 1000, 9);
  SpacePoint start = p.space->default_point();
  auto planner = PlannerRegistry::instance().create("planner", "rule", Config());
  PlanResult all = planner->propose(c);
  REQUIRE(all.plans.size() >= 2);
  SpacePoint elsewhere = apply_plan(start, all.plans.front());
  auto known = std::make_shared<KnownVariants>();
  known->add({{"params", TunableSpace::to_json(elsewhere)}});
  known->add({{"no_params", true}});  // a node without params excludes nothing
  CHECK(known->size() == 1);
  c.known = known;
  PlanResult rest = planner->propose(c);
  CHECK(rest.plans.size() == all.plans.size() - 1);
  for (const Plan& plan : rest.plans) CHECK(apply_plan(start, plan) != elsewhere);
}

TEST_CASE("rule agents: a parent without params gives an error, not an exception") {
  Problem p = tiny_problem();
  Config config;
  PlanContext c = context_for(p, 3, 1);
  c.parent.set_meta(json::object());
  PlanResult r = PlannerRegistry::instance().create("planner", "rule", config)->propose(c);
  CHECK(r.plans.empty());
  CHECK(r.error.find("params") != std::string::npos);

  Plan plan{"TILE 16 -> 32", 1.0, {{"set", {{"TILE", 32}}}}};
  CodeResult code = CoderRegistry::instance().create("coder", "rule", config)->write(p, c.parent, plan);
  CHECK_FALSE(code.ok);
  CHECK(code.error.find("params") != std::string::npos);

  DebugContext d;
  d.problem = &p;
  d.parent = c.parent;
  d.failed = c.parent;
  CodeResult fix = DebuggerRegistry::instance().create("debugger", "rule", config)->repair(d);
  CHECK_FALSE(fix.ok);
  CHECK(fix.error.find("params") != std::string::npos);

  Problem plain = p;
  plain.space.reset();
  plain.template_source.reset();
  PlanContext pc = context_for(p, 3, 1);
  pc.problem = &plain;
  PlanResult no_space = PlannerRegistry::instance().create("planner", "rule", config)->propose(pc);
  CHECK(no_space.plans.empty());
  CHECK(no_space.error.find("space") != std::string::npos);
}

TEST_CASE("rule coder: renders the plan's point and records its params") {
  Problem p = tiny_problem();
  Config config;
  auto coder = CoderRegistry::instance().create("coder", "rule", config);
  NodeView parent = node(0, p.seed_meta.at("params"));
  Plan plan{"TILE 16 -> 32, ORDER ijk -> ikj", 0.5, {{"set", {{"TILE", 32}, {"ORDER", "ikj"}}}}};
  CodeResult r = coder->write(p, parent, plan);
  REQUIRE(r.ok);
  CHECK(r.source == "// order ikj\nconstexpr int TILE = 32;\nconstexpr int UNROLL = 2;\n");
  CHECK(r.meta.at("params") == json({{"TILE", 32}, {"UNROLL", 2}, {"ORDER", "ikj"}}));

  Plan invalid{"UNROLL 2 -> 8", 1.0, {{"set", {{"TILE", 64}, {"UNROLL", 8}}}}};  // 512 > 256
  CodeResult bad = coder->write(p, parent, invalid);
  CHECK_FALSE(bad.ok);
  CHECK(bad.error.find("not in the space") != std::string::npos);

  Plan unknown{"X", 1.0, {{"set", {{"WIDTH", 4}}}}};
  CHECK(coder->write(p, parent, unknown).error.find("WIDTH") != std::string::npos);
  Plan llm_plan{"use AVX-512", 1.0, json::object()};
  CHECK(coder->write(p, parent, llm_plan).error.find("\"set\"") != std::string::npos);
}

TEST_CASE("rule debugger: reverts the parameter the failure names, keeps the other") {
  Problem p = tiny_problem();
  Config config;
  auto debugger = DebuggerRegistry::instance().create("debugger", "rule", config);
  DebugContext d;
  d.problem = &p;
  d.parent = node(1, {{"TILE", 16}, {"UNROLL", 2}, {"ORDER", "ijk"}});
  d.failed = node(2, {{"TILE", 32}, {"UNROLL", 4}, {"ORDER", "ijk"}});
  d.failed.result = std::make_shared<const EvalResult>(failure(Verdict::compile_error, "static assertion failed: UNROLL must divide the row length"));
  d.rng = CounterRng(1, 2);
  CodeResult r = debugger->repair(d);
  REQUIRE(r.ok);
  CHECK(r.meta.at("reverted") == "UNROLL");
  CHECK(r.meta.at("params") == json({{"TILE", 32}, {"UNROLL", 2}, {"ORDER", "ijk"}}));
  CHECK(r.source.find("TILE = 32") != std::string::npos);

  // "UNROLL_X" is not UNROLL: only whole words count as evidence.
  d.failed.result = std::make_shared<const EvalResult>(failure(Verdict::compile_error, "error", "note: TILE too large for UNROLL_X"));
  CHECK(debugger->repair(d).meta.at("reverted") == "TILE");

  // Second attempt on the same failure tries the other explanation.
  d.attempt = 1;
  CHECK(debugger->repair(d).meta.at("reverted") == "UNROLL");
}

TEST_CASE("rule debugger: without evidence, reverts the larger jump; ties use the rng") {
  Problem p = tiny_problem();
  Config config;
  auto debugger = DebuggerRegistry::instance().create("debugger", "rule", config);
  DebugContext d;
  d.problem = &p;
  d.parent = node(1, {{"TILE", 8}, {"UNROLL", 1}, {"ORDER", "ijk"}});
  d.failed = node(2, {{"TILE", 64}, {"UNROLL", 2}, {"ORDER", "ijk"}});  // TILE moved 3, UNROLL 1
  d.failed.result = std::make_shared<const EvalResult>(failure(Verdict::wrong_answer, "max abs error 3.2 at index 17"));
  CodeResult r = debugger->repair(d);
  REQUIRE(r.ok);
  CHECK(r.meta.at("reverted") == "TILE");
  CHECK(r.meta.at("params").at("UNROLL") == 2);

  // A tie (both moved one step): the rng picks, deterministically per key.
  d.parent = node(1, {{"TILE", 16}, {"UNROLL", 2}, {"ORDER", "ijk"}});
  d.failed = node(2, {{"TILE", 32}, {"UNROLL", 2}, {"ORDER", "ikj"}});
  d.failed.result = std::make_shared<const EvalResult>(failure(Verdict::crash, "signal 11"));
  std::set<std::string> reverted;
  for (uint64_t key = 0; key < 16; ++key) {
    d.rng = CounterRng(5, key);
    std::string first = debugger->repair(d).meta.at("reverted");
    CHECK(debugger->repair(d).meta.at("reverted") == first);
    reverted.insert(first);
  }
  CHECK(reverted == std::set<std::string>{"TILE", "ORDER"});
}

TEST_CASE("rule debugger: one changed parameter leaves nothing to revert") {
  Problem p = tiny_problem();
  Config config;
  DebugContext d;
  d.problem = &p;
  d.parent = node(1, {{"TILE", 16}, {"UNROLL", 2}, {"ORDER", "ijk"}});
  d.failed = node(2, {{"TILE", 32}, {"UNROLL", 2}, {"ORDER", "ijk"}});
  d.failed.result = std::make_shared<const EvalResult>(failure(Verdict::timeout, "timed out"));
  CodeResult r = DebuggerRegistry::instance().create("debugger", "rule", config)->repair(d);
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("nothing to revert") != std::string::npos);
  CHECK(r.error.find("TILE") != std::string::npos);
}

TEST_CASE("sweep planner: every valid point once, in order, skipping known points; then exhaustion") {
  Problem p = tiny_problem();
  auto planner = PlannerRegistry::instance().create("planner", "sweep", Config());
  auto known = std::make_shared<KnownVariants>();
  known->add(p.seed_meta);  // the seed's point is in the graph already
  std::vector<SpacePoint> seen;
  for (int call = 0; call < 100; ++call) {
    PlanContext c = context_for(p, 3, static_cast<uint64_t>(call));
    c.parent = node(call, json{{"TILE", 64}, {"UNROLL", 1}, {"ORDER", "ikj"}});  // plans ignore the parent
    c.known = known;
    PlanResult r = planner->propose(c);
    if (r.plans.empty()) {
      CHECK(r.error.find("handed out") != std::string::npos);
      break;
    }
    CHECK(static_cast<int>(r.plans.size()) <= 3);
    for (const Plan& plan : r.plans) {
      CHECK(plan.data.at("set").size() == 3);  // a whole point
      SpacePoint point = apply_plan(SpacePoint{}, plan);
      CHECK(p.space->valid(point));
      CHECK(plan.text.find("sweep point") == 0);
      seen.push_back(point);
    }
  }
  // Count the valid points by hand: TILE % UNROLL == 0 always holds here, TILE * UNROLL <= 256
  // removes only (64, 8): 16 - 1 = 15 pairs, times 2 orders = 30, minus the seed.
  CHECK(seen.size() == 29);
  CHECK(std::set<SpacePoint>(seen.begin(), seen.end()).size() == seen.size());
  CHECK(std::find(seen.begin(), seen.end(), p.space->default_point()) == seen.end());
  // Mixed-radix order, the last parameter (ORDER) fastest: the first point is TILE 8, UNROLL 1, ijk.
  CHECK(seen.front() == SpacePoint{{"TILE", 8}, {"UNROLL", 1}, {"ORDER", "ijk"}});
  CHECK(seen[1] == SpacePoint{{"TILE", 8}, {"UNROLL", 1}, {"ORDER", "ikj"}});
}

TEST_CASE("node view: the plan history follows the links up to the seed, oldest first") {
  NodeView seed;
  CHECK(seed.plan_history().empty());
  auto a = std::make_shared<const PlanLink>(PlanLink{nullptr, "TILE 16 -> 32"});
  auto b = std::make_shared<const PlanLink>(PlanLink{a, "UNROLL 1 -> 4"});
  NodeView child;
  child.plan_link = b;
  CHECK(child.plan_history() == std::vector<std::string>{"TILE 16 -> 32", "UNROLL 1 -> 4"});
  child.plan_link = a;  // a sibling's link shares the same parent chain
  CHECK(child.plan_history() == std::vector<std::string>{"TILE 16 -> 32"});
}

}  // namespace kmcts

