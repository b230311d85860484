// Every shipped CPU problem loads, renders its seed at a valid default point, and gives
// the rule agents something to do from it.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "agents/roles.hpp"
#include "core/problem.hpp"

namespace kmcts {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> cpu_problem_dirs() {
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(fs::path(KMCTS_SOURCE_DIR) / "problems" / "cpu"))
    if (entry.is_directory()) dirs.push_back(entry.path());
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

}  // namespace

TEST_CASE("problems: every folder under problems/cpu loads, with a valid default and a rendered seed") {
  std::vector<fs::path> dirs = cpu_problem_dirs();
  CHECK(dirs.size() >= 3);
  for (const auto& dir : dirs) {
    CAPTURE(dir.string());
    Problem p = load_problem(dir);
    CHECK(p.name == dir.filename().string());
    CHECK(p.kind == "cpu");
    CHECK(!p.description.empty());
    CHECK(p.flops > 0);
    CHECK(p.bytes > 0);
    CHECK(p.reference_source.find("kmcts_kernel") != std::string::npos);
    REQUIRE(p.space.has_value());
    REQUIRE(p.template_source.has_value());
    CHECK(p.space->valid(p.space->default_point()));
    CHECK(p.seed_source.find("{{") == std::string::npos);  // every placeholder substituted
    CHECK(p.seed_source.find("kmcts_kernel") != std::string::npos);
    CHECK(p.seed_source.find("#include \"kmcts_cpu.h\"") != std::string::npos);
    CHECK(p.seed_meta.at("params") == TunableSpace::to_json(p.space->default_point()));
    // fp32 summation is reordered by every variant: no problem may demand bit-exactness.
    CHECK(p.atol > 0);
    CHECK(p.rtol > 0);
  }
}

TEST_CASE("problems: the rule planner and coder move from each seed to valid, different sources") {
  Config config;
  auto planner = PlannerRegistry::instance().create("planner", "rule", config);
  auto coder = CoderRegistry::instance().create("coder", "rule", config);
  for (const auto& dir : cpu_problem_dirs()) {
    CAPTURE(dir.string());
    Problem p = load_problem(dir);
    PlanContext c;
    c.problem = &p;
    c.parent.id = 0;
    c.parent.source_text = std::make_shared<const std::string>(p.seed_source);
    c.parent.set_meta(p.seed_meta);
    c.count = 4;
    c.rng = CounterRng(1, 0);
    PlanResult plans = planner->propose(c);
    CHECK(plans.plans.size() == 4);
    for (const Plan& plan : plans.plans) {
      CodeResult code = coder->write(p, c.parent, plan);
      CHECK_MESSAGE(code.ok, code.error);
      CHECK(code.source != p.seed_source);
    }
  }
}

TEST_CASE("problems: matmul's COLS = 128 is the planted compile failure, and the debugger reverts it") {
  Problem p = load_problem(fs::path(KMCTS_SOURCE_DIR) / "problems" / "cpu" / "matmul");
  SpacePoint parent = p.space->default_point();
  parent["ORDER"] = "blocked";
  parent["COLS"] = 64;
  SpacePoint failed = parent;
  failed["COLS"] = 128;
  failed["ROWS"] = 2;
  REQUIRE(p.space->valid(failed));  // the space allows it; only the compiler objects
  Config config;
  CodeResult child = CoderRegistry::instance().create("coder", "rule", config)->write(
      p, NodeView{1, nullptr, std::make_shared<const nlohmann::json>(nlohmann::json{{"params", TunableSpace::to_json(parent)}}), {}, {}, {}},
      Plan{"ROWS 1 -> 2, COLS 64 -> 128", 0.5, {{"set", {{"ROWS", 2}, {"COLS", 128}}}}});
  REQUIRE(child.ok);
  CHECK(child.source.find("static_assert(N % COLS == 0") != std::string::npos);

  DebugContext d;
  d.problem = &p;
  d.parent = NodeView{1, nullptr, std::make_shared<const nlohmann::json>(nlohmann::json{{"params", TunableSpace::to_json(parent)}}), {}, {}, {}};
  d.failed = NodeView{2, std::make_shared<const std::string>(child.source), std::make_shared<const nlohmann::json>(child.meta), {}, {}, {}};
  EvalResult compile_error;
  compile_error.verdict = Verdict::compile_error;
  compile_error.message = "kernel.cpp:23:24: error: static assertion failed: COLS must divide N (192)";
  d.failed.result = std::make_shared<const EvalResult>(compile_error);
  CodeResult fixed = DebuggerRegistry::instance().create("debugger", "rule", config)->repair(d);
  REQUIRE(fixed.ok);
  CHECK(fixed.meta.at("reverted") == "COLS");
  CHECK(fixed.meta.at("params").at("ROWS") == 2);
  CHECK(fixed.meta.at("params").at("COLS") == 64);
}

}  // namespace kmcts
