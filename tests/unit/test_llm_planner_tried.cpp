// The LLM Planner's prompt as sent (a mock server keeps it): the list of plans already tried
// from a kernel, each edge's own plan and what came of it, a Coder that changed nothing included
// (real models often hand the kernel back); and the optimisation archive's lines for the run.
#include <doctest/doctest.h>

#include <filesystem>
#include <mutex>

#include "agents/llm/mock_server.hpp"
#include "agents/roles.hpp"
#include "core/problem.hpp"

using namespace kmcts;

namespace {

// An LLM Planner on a mock server that keeps the last prompt sent, and a context on matmul's seed.
struct PlannerOnMock {
  std::mutex mutex;
  std::string prompt;
  llm::MockLlmServer server{0, [this](const std::string&, const std::string&, const std::string& user) -> std::string {
                              std::lock_guard<std::mutex> lock(mutex);
                              prompt = user;
                              return "1. [0.5] unroll the k loop\n";
                            }};
  Problem problem = load_problem(std::filesystem::path(KMCTS_SOURCE_DIR) / "problems/cpu/matmul");
  std::unique_ptr<Planner> planner;
  PlanContext ctx;
  PlannerOnMock() {
    Config c;
    c.set("agents.backend=llm");
    c.set("agents.llm.api_key_env=KMCTS_TEST_NO_SUCH_VARIABLE");
    c.set_value("agents.llm.base_url", server.base_url(), "test");
    planner = PlannerRegistry::instance().create("planner", "llm", c);
    ctx.problem = &problem;
    ctx.parent.source_text = std::make_shared<const std::string>(problem.seed_source);
  }
};

}  // namespace

TEST_CASE("llm planner: the tried list names each edge's plan and says when a plan changed nothing") {
  PlannerOnMock m;
  PlanContext& ctx = m.ctx;
  ctx.parent.id = 3;
  NodeView self;  // the Coder returned the kernel unchanged: an edge back to node 3
  self.id = 3;
  self.edge_plan = "tile the loops 32x32";
  self.reached_known = self.unchanged = true;
  NodeView known;  // the same code as a kernel found before, under another plan
  known.id = 1;
  known.edge_plan = "swap the loops";
  known.reached_known = true;
  known.plan_link = std::make_shared<const PlanLink>(PlanLink{nullptr, "ORDER ijk -> ikj"});
  NodeView fresh;
  fresh.id = 4;
  fresh.edge_plan = "vectorize the inner loop";
  ctx.tried = {self, known, fresh};
  REQUIRE(m.planner->propose(ctx).plans.size() == 1);
  const std::string& prompt = m.prompt;
  CHECK(prompt.find("- tile the loops 32x32 -> no change: the code written for it was this kernel itself") !=
        std::string::npos);
  // The edge's plan, not the plan that first made kernel #1.
  CHECK(prompt.find("- swap the loops -> the same code as kernel #1, found before: not measured yet") != std::string::npos);
  CHECK(prompt.find("ORDER ijk -> ikj") == std::string::npos);
  CHECK(prompt.find("- vectorize the inner loop -> not measured yet") != std::string::npos);
}

TEST_CASE("llm planner: the prompt sent shows the archive's improvements, or says there are none") {
  PlannerOnMock m;
  PlanContext& ctx = m.ctx;
  const std::string& prompt = m.prompt;
  REQUIRE(m.planner->propose(ctx).plans.size() == 1);
  // Without archive lines the prompt has no such section: it is the one recorded cassettes hold.
  CHECK(prompt.find("Improvements found before") == std::string::npos);
  CHECK(prompt.find("## Plans already tried from this kernel (do not repeat them)\nnone yet\n\n# Task") !=
        std::string::npos);
  const std::string memory = "- \"ORDER ijk -> ikj\" on matmul (matmul|2^16, vm): 7.81x faster than its parent (3.49 ms -> 447 us)\n";
  ctx.memory = &memory;
  REQUIRE(m.planner->propose(ctx).plans.size() == 1);
  CHECK(prompt.find("none yet\n\n## Improvements found before on similar problems (from kmcts's optimisation archive: "
                    "plan, and what it gained over its parent)\n" + memory) != std::string::npos);
}
