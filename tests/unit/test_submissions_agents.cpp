// The submissions agents: candidate files from a folder, handed out once each as children of
// the root, numeric names by number.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "agents/roles.hpp"
#include "core/error.hpp"
#include "core/options.hpp"
#include "core/problem.hpp"
#include "scratch.hpp"

using namespace kmcts;
namespace fs = std::filesystem;

TEST_CASE("submissions agents: each file once, numeric names by number, then exhausted; only the root expands") {
  const fs::path dir = kmcts::test::fresh_dir("submissions");
  fs::create_directories(dir / "relu");
  for (const char* name : {"10.py", "2.py", "1.py", "extra.py", "notes.txt"}) std::ofstream(dir / "relu" / name) << "# " << name << "\n";
  Config config;
  config.set_value("agents.submissions.dir", dir.string(), "test");
  auto planner = PlannerRegistry::instance().create("planner", "submissions", config);
  auto coder = CoderRegistry::instance().create("coder", "submissions", config);
  Problem problem;
  problem.name = "relu";
  PlanContext root;
  root.problem = &problem;
  root.parent.id = 0;
  root.count = 4;
  std::vector<std::string> order;
  for (int k = 0; k < 4; ++k) {
    PlanResult r = planner->propose(root);
    REQUIRE(r.plans.size() == 1);  // one per call, whatever count asks
    CHECK_FALSE(r.exhausted);
    CodeResult code = coder->write(problem, root.parent, r.plans[0]);
    REQUIRE(code.ok);
    order.push_back(code.source);
  }
  CHECK(order == std::vector<std::string>{"# 1.py\n", "# 2.py\n", "# 10.py\n", "# extra.py\n"});
  PlanResult done = planner->propose(root);
  CHECK(done.plans.empty());
  CHECK(done.exhausted);
  CHECK(done.error.find("all 4 submissions") != std::string::npos);

  PlanContext child = root;
  child.parent.id = 3;
  CHECK(planner->propose(child).exhausted);
  problem.name = "missing";
  auto fresh = PlannerRegistry::instance().create("planner", "submissions", config);
  CHECK(fresh->propose(root).error.find("no folder") != std::string::npos);
  CHECK(DebuggerRegistry::instance().create("debugger", "submissions", config)->repair({}).ok == false);
  config.set_value("agents.submissions.dir", (dir / "absent").string(), "test");
  CHECK_THROWS_WITH_AS(PlannerRegistry::instance().create("planner", "submissions", config),
                       doctest::Contains("agents.submissions.dir"), InputError);
}
