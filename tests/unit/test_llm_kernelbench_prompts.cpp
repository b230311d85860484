// The LLM agents on a KernelBench-format problem: the prompts of configs/prompts/kernelbench/
// (the PyTorch reference, the current ModelNew, the evaluation's rules), and a Python reply
// taken as the candidate file; a C++ block is not a ModelNew.
#include <doctest/doctest.h>

#include <filesystem>
#include <mutex>

#include "agents/llm/mock_server.hpp"
#include "agents/llm/reply_parser.hpp"
#include "agents/roles.hpp"
#include "core/problem.hpp"

using namespace kmcts;

TEST_CASE("llm agents: KernelBench problems get their own prompts and Python replies") {
  CHECK(llm::extract_code("```python\nclass ModelNew: pass\n```\n```cpp\nint x;\n```", "kernelbench") ==
        "class ModelNew: pass\n");
  CHECK_FALSE(llm::extract_code("```cpp\n__global__ void k() {}\n```", "kernelbench").has_value());
  CHECK(llm::extract_code("```python\nx = 1\n```\n```cuda\nint k;\n```") == "int k;\n");  // other kinds: kernels

  std::mutex mutex;
  std::vector<std::string> prompts;
  llm::MockLlmServer server(0, [&](const std::string&, const std::string&, const std::string& user) -> std::string {
    std::lock_guard<std::mutex> lock(mutex);
    prompts.push_back(user);
    if (user.find("Propose") != std::string::npos) return "1. [0.6] fuse the multiply and add in one kernel\n";
    return "Here it is:\n```python\nimport torch\nclass ModelNew(torch.nn.Module):\n    pass\n```\n";
  });
  bool triton = false, hip = false;
  SUBCASE("CUDA kernels through load_inline (the default)") {}
  SUBCASE("Triton kernels") { triton = true; }
  SUBCASE("HIP kernels through load_inline with hipcc (KernelBench's hip backend)") { hip = true; }
  Config c;
  if (triton) c.set("agents.llm.kernelbench_backend=triton");
  if (hip) c.set("agents.llm.kernelbench_backend=hip");
  c.set("agents.backend=llm");
  c.set("agents.llm.api_key_env=KMCTS_TEST_NO_SUCH_VARIABLE");
  c.set_value("agents.llm.base_url", server.base_url(), "test");
  const Problem problem =
      load_problem(std::filesystem::path(KMCTS_SOURCE_DIR) / "problems/kernelbench-format/level1/4_scale_bias.py");
  auto planner = PlannerRegistry::instance().create("planner", "llm", c);
  auto coder = CoderRegistry::instance().create("coder", "llm", c);
  PlanContext ctx;
  ctx.problem = &problem;
  ctx.parent.id = 0;
  ctx.parent.source_text = std::make_shared<const std::string>(problem.seed_source);
  PlanResult plans = planner->propose(ctx);
  REQUIRE(plans.plans.size() == 1);
  CodeResult code = coder->write(problem, ctx.parent, plans.plans[0]);
  REQUIRE(code.ok);
  CHECK(code.source.find("class ModelNew(torch.nn.Module)") != std::string::npos);
  REQUIRE(prompts.size() == 2);
  CHECK(prompts[0].find("```python\n# A kmcts-written problem in KernelBench's format") != std::string::npos);
  CHECK(prompts[0].find("none of whose kernels is its own") != std::string::npos);
  CHECK((prompts[1].find("load_inline") != std::string::npos) == !triton);
  CHECK((prompts[1].find("@triton.jit") != std::string::npos) == triton);
  CHECK((prompts[1].find("c10::cuda::getCurrentCUDAStream()") != std::string::npos) == (!triton && !hip));  // torch-free CUDA sources
  CHECK((prompts[1].find("os.environ[\"CXX\"] = \"hipcc\"") != std::string::npos) == hip);
  CHECK((prompts[1].find("64-lane wavefronts") != std::string::npos) == hip);
  CHECK(prompts[0].find(triton ? "custom Triton kernels" : hip ? "custom HIP kernels" : "custom CUDA kernels") != std::string::npos);
  CHECK(prompts[1].find("fuse the multiply and add in one kernel") != std::string::npos);
  CHECK(prompts[1].find("class ModelNew(nn.Module)") != std::string::npos);  // the current ModelNew (the seed)
}
