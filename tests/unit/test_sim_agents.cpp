// The agent simulator (agents/sim/): the planner's kinds of move at the shares set, the coder's
// defects at the rates set, the debugger's repairs, the same answers for the same inputs, and
// the simulation evaluators judging a defect as it says.
#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <string>

#include "agents/roles.hpp"
#include "core/simulated_defect.hpp"
#include "core/space.hpp"
#include "hardware/evaluator.hpp"

using namespace kmcts;
using nlohmann::json;

namespace {

// 6 x 5 x 4 = 120 points, the seed in the middle of the first two axes.
Problem sim_problem() {
  Problem p;
  p.name = "sim";
  p.kind = "cpu";
  p.space = TunableSpace::from_json(json::parse(R"({
    "params": [{"name": "TILE", "values": [4, 8, 16, 32, 64, 128]},
               {"name": "UNROLL", "values": [1, 2, 4, 8, 16]},
               {"name": "ORDER", "values": ["ijk", "ikj", "kij", "jik"]}],
    "default": {"TILE": 16, "UNROLL": 4, "ORDER": "ijk"}})"),
                                    "sim space");
  p.template_source = "tile={{TILE}} unroll={{UNROLL}} order={{ORDER}}\n";
  p.seed_source = p.space->render(*p.template_source, p.space->default_point());
  p.seed_meta = {{"params", TunableSpace::to_json(p.space->default_point())}};
  return p;
}

Config sim_config(std::initializer_list<std::pair<const char*, json>> values) {
  Config c;
  for (const auto& [key, value] : values) c.set_value(std::string("agents.sim.") + key, value, "test");
  return c;
}

NodeView node_at(const Problem& p, const json& params) {
  NodeView n;
  n.id = 1;
  n.set_meta({{"params", params}});
  n.source_text = std::make_shared<const std::string>(
      p.space->render(*p.template_source, TunableSpace::point_from_json(params)));
  return n;
}

std::vector<Plan> plans(const Problem& p, const Config& c, const NodeView& parent, uint64_t key, int count = 4) {
  auto planner = PlannerRegistry::instance().create("planner", "sim", c);
  PlanContext context;
  context.problem = &p;
  context.parent = parent;
  context.count = count;
  context.rng = CounterRng(7, key);
  return planner->propose(context).plans;
}

}  // namespace

TEST_CASE("agent simulator: a defect line, read back, stripped, and judged") {
  const std::string source = "int main() {}\n";
  CHECK(sim::defect_of(source) == sim::Defect::none);
  CHECK(sim::with_defect(source, sim::Defect::none, 0) == source);
  for (const auto defect : {sim::Defect::compile_error, sim::Defect::wrong_answer}) {
    const std::string broken = sim::with_defect(source, defect, 2);
    CHECK(sim::defect_of(broken) == defect);
    CHECK(sim::without_defect(broken) == source);
    CHECK(broken != sim::with_defect(source, defect, 3));  // a failed repair is a new source
    const auto result = sim::simulated_result(broken);
    REQUIRE(result);
    CHECK(result->verdict == (defect == sim::Defect::compile_error ? Verdict::compile_error : Verdict::wrong_answer));
    CHECK(result->message.find("attempt 2") != std::string::npos);
  }
  CHECK(sim::with_defect(source, sim::Defect::compile_error, 0).rfind("#error ", 0) == 0);  // a real compiler refuses it too
  CHECK_FALSE(sim::simulated_result(source));
}

TEST_CASE("agent simulator: the planner's moves are of the kinds set, new, valid and repeatable") {
  const Problem p = sim_problem();
  const NodeView seed = node_at(p, p.seed_meta.at("params"));
  const TunableSpace& space = *p.space;
  const auto origin = *space.indices_of(space.default_point());
  SUBCASE("local only: one parameter, one step") {
    const Config c = sim_config({{"local_share", 1.0}, {"jump_share", 0.0}, {"regression_share", 0.0}});
    for (uint64_t key = 0; key < 20; ++key)
      for (const Plan& plan : plans(p, c, seed, key)) {
        CHECK(plan.data.at("move") == "local");
        REQUIRE(plan.data.at("set").size() == 1);
        const std::string name = plan.data.at("set").begin().key();
        size_t at = 0;
        while (space.params()[at].name != name) ++at;
        CHECK(std::abs(space.index_of(name, plan.data.at("set").at(name)) - origin[at]) == 1);
      }
  }
  SUBCASE("regression only: a moved parameter goes back to the seed's value") {
    const Config c = sim_config({{"local_share", 0.0}, {"jump_share", 0.0}, {"regression_share", 1.0}});
    const NodeView moved = node_at(p, {{"TILE", 64}, {"UNROLL", 1}, {"ORDER", "ijk"}});
    std::set<std::string> reverted;
    for (uint64_t key = 0; key < 20; ++key)
      for (const Plan& plan : plans(p, c, moved, key, 2)) {
        REQUIRE(plan.data.at("set").size() == 1);
        const std::string name = plan.data.at("set").begin().key();
        CHECK(plan.data.at("set").at(name) == p.seed_meta.at("params").at(name));
        reverted.insert(name);
      }
    CHECK(reverted == std::set<std::string>{"TILE", "UNROLL"});
  }
  SUBCASE("jumps change two or more parameters; plans are distinct and the same for the same context") {
    const Config c = sim_config({{"local_share", 0.0}, {"jump_share", 1.0}, {"regression_share", 0.0}});
    int multi = 0;
    for (uint64_t key = 0; key < 20; ++key) {
      const auto first = plans(p, c, seed, key), again = plans(p, c, seed, key);
      REQUIRE(first.size() == again.size());
      std::set<std::string> texts;
      for (size_t i = 0; i < first.size(); ++i) {
        CHECK(first[i].text == again[i].text);
        CHECK(texts.insert(first[i].text).second);
        CHECK(first[i].text != "no change");
        multi += first[i].data.at("set").size() >= 2;
      }
    }
    CHECK(multi > 40);  // most jumps move several parameters (two draws may pick one twice)
  }
}

TEST_CASE("agent simulator: the coder's defects come at the rates set; the debugger repairs at its own") {
  const Problem p = sim_problem();
  const Config c = sim_config({{"compile_failure", 0.3}, {"wrong_answer", 0.1}, {"repair", 0.6}});
  auto coder = CoderRegistry::instance().create("coder", "sim", c);
  auto debugger = DebuggerRegistry::instance().create("debugger", "sim", c);
  // Distinct (parent, plan) pairs: the draw is a function of the parent's source and the plan.
  std::vector<std::pair<NodeView, Plan>> pairs;
  p.space->for_each_point([&](const SpacePoint& point) {
    const NodeView parent = node_at(p, TunableSpace::to_json(point));
    for (const Plan& plan : plans(p, Config(), parent, 0, 5)) pairs.emplace_back(parent, plan);
  });
  int compile = 0, wrong = 0, total = 0, repaired = 0, broken = 0;
  uint64_t key = 0;
  for (const auto& [parent, plan] : pairs) {
    ++key;
    const CodeResult code = coder->write(p, parent, plan);
    REQUIRE(code.ok);
    CHECK(coder->write(p, parent, plan).source == code.source);  // the same plan, the same code
    ++total;
    const sim::Defect defect = sim::defect_of(code.source);
    compile += defect == sim::Defect::compile_error;
    wrong += defect == sim::Defect::wrong_answer;
    if (defect == sim::Defect::none) continue;
    CHECK(code.meta.at("simulated_defect") == sim::to_string(defect));
    DebugContext context;
    context.problem = &p;
    context.failed.source_text = std::make_shared<const std::string>(code.source);
    context.failed.set_meta(code.meta);
    context.parent = parent;
    context.rng = CounterRng(3, key);
    const CodeResult fix = debugger->repair(context);
    REQUIRE(fix.ok);
    if (sim::defect_of(fix.source) == sim::Defect::none) {
      ++repaired;
      CHECK(fix.source == sim::without_defect(code.source));
      CHECK_FALSE(fix.meta.contains("simulated_defect"));
    } else {
      ++broken;
      CHECK(fix.source != code.source);
    }
  }
  REQUIRE(total > 400);
  CHECK(std::abs(compile / double(total) - 0.3) < 0.05);
  CHECK(std::abs(wrong / double(total) - 0.1) < 0.04);
  CHECK(std::abs(repaired / double(repaired + broken) - 0.6) < 0.08);
}

TEST_CASE("agent simulator: the synthetic evaluator judges a defect as it says and the clean point as the landscape does") {
  const Problem p = sim_problem();
  Config c;
  c.set("evaluator.name=synthetic");
  c.set("evaluator.synthetic.mode=space");
  c.set_value("evaluator.synthetic.failure_rate", 0.0, "test");
  auto evaluator = EvaluatorRegistry::instance().create("evaluator", "synthetic", p, c);
  const std::string clean = p.space->render(*p.template_source, {{"TILE", 32}, {"UNROLL", 4}, {"ORDER", "ijk"}});
  const EvalResult ok = evaluator->evaluate(clean);
  CHECK(ok.verdict == Verdict::ok);
  CHECK(evaluator->evaluate(sim::with_defect(clean, sim::Defect::compile_error, 0)).verdict == Verdict::compile_error);
  const EvalResult wrong = evaluator->evaluate(sim::with_defect(clean, sim::Defect::wrong_answer, 1));
  CHECK(wrong.verdict == Verdict::wrong_answer);
  CHECK(wrong.message.find("attempt 1") != std::string::npos);
}
