// The per-kernel profile (issue 30, item 1): the kernel tables a host reports (bounded, as
// they come from untrusted code), the profile the evaluator builds from the worker's sums,
// and the sections the Planner and Coder prompts actually sent carry (a mock server keeps
// them), or do not with agents.feedback.profile=false.
#include <doctest/doctest.h>

#include <filesystem>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "agents/kernel_profile_text.hpp"
#include "agents/llm/mock_server.hpp"
#include "agents/roles.hpp"
#include "core/problem.hpp"
#include "hardware/cuda/cuda_evaluator.hpp"
#include "hardware/cuda/deep_profile.hpp"
#include "hardware/cuda/kernel_table.hpp"
#include "hardware/kernel_profile.hpp"
#include "hardware/kernelbench/kernelbench_evaluator.hpp"

using namespace kmcts;
using nlohmann::json;

namespace {

cuda::KernelLaunch launch(const std::string& name, int grid, int block, int registers) {
  return {.name = name, .grid = {grid, 1, 1}, .block = {block, 1, 1}, .registers = registers, .smem_static = 4096};
}

// What the CUDA worker replies for a measurement with kernel tables: 100 timed samples a side.
// The candidate: 2 launches of its main kernel per call (8 us each) and one small one (1 us);
// the reference: one launch of a library-style kernel (20 us).
json worker_reply() {
  cuda::KernelTable cand, ref;
  for (int i = 0; i < 100; ++i) {
    cand.add(launch("_Z8silu_mulPKfPfl", 1024, 256, 32), 8000);
    cand.add(launch("_Z8silu_mulPKfPfl", 1024, 256, 32), 8000);
    cand.add(launch("_Z4tailPf", 1, 32, 8), 1000);
    ref.add(launch("_ZN2at6native13reduce_kernelEv", 2048, 128, 24), 20000);
  }
  std::vector<double> ref_ns(40, 20500.0), cand_ns(40, 17500.0);
  return {{"verdict", "ok"},
          {"reference_samples_ns", ref_ns},
          {"candidate_samples_ns", cand_ns},
          {"counters", {{"stop_reason", "rse_target"}}},
          {"device", {{"name", "NVIDIA H200"}, {"peak_bytes_per_s_estimate", 4.8e12}}},
          {"kernel_tables",
           {{"candidate", cand.to_json()}, {"reference", ref.to_json()}, {"samples_candidate", 100}, {"samples_reference", 100}}}};
}

EvalResult measured(const json& reply) {
  SandboxResult run;
  run.started = true;
  run.exit_code = 0;
  run.out = reply.dump() + "\n";
  Problem problem;
  problem.bytes = 4.2e7;  // 42 MB per call: 2.4 TB/s at 17.5 us, half the 4.8 TB/s peak
  return cuda_result_from_worker(run, 60, problem, cuda::Roofline{}, 1);
}

}  // namespace

TEST_CASE("kernel table: launches summed by name and geometry, bounded, strict when parsed") {
  cuda::KernelTable t;
  t.add(launch("k", 1, 32, 8), 100);
  t.add(launch("k", 1, 32, 8), 50);
  t.add(launch("k", 2, 32, 8), 10);  // another grid: another row
  REQUIRE(t.rows().size() == 2);
  CHECK(t.rows().at(launch("k", 1, 32, 8)).calls == 2);
  CHECK(t.rows().at(launch("k", 1, 32, 8)).ns == 150);
  const cuda::KernelTable back = cuda::KernelTable::from_json(t.to_json());
  CHECK(back.rows() == t.rows());
  // A host that launches thousands of distinct kernels: the table stays at 64 rows.
  cuda::KernelTable many;
  for (int i = 0; i < 200; ++i) many.add(launch(fmt::format("k{}", i), 1, 32, 8), 1);
  CHECK(many.rows().size() == cuda::KernelTable::kMaxRows);
  CHECK(many.rows().at(cuda::KernelLaunch{.name = "(other)"}).calls == 200 - 63);
  CHECK(cuda::KernelTable::from_json(many.to_json()).rows() == many.rows());
  // Untrusted input: oversized, negative or malformed tables throw.
  json rows = json::array();
  for (int i = 0; i < 65; ++i) rows.push_back(t.to_json()[0]);
  CHECK_THROWS(cuda::KernelTable::from_json(rows));
  json bad = t.to_json();
  bad[0]["calls"] = -1;
  CHECK_THROWS(cuda::KernelTable::from_json(bad));
  bad = t.to_json();
  bad[0]["name"] = std::string(2000, 'x');
  CHECK_THROWS(cuda::KernelTable::from_json(bad));
  bad = t.to_json();
  bad[0].erase("grid");
  CHECK_THROWS(cuda::KernelTable::from_json(bad));
}

TEST_CASE("kernel profile: shares, launches per call, geometry and the achieved rate, both sides") {
  const EvalResult r = measured(worker_reply());
  REQUIRE(r.ok());
  REQUIRE(r.details.contains("kernel_profile"));
  const json& p = r.details["kernel_profile"];
  const json& cand = p["candidate"];
  CHECK(cand["samples"] == 100);
  CHECK(cand["launches_per_call"].get<double>() == doctest::Approx(3));
  REQUIRE(cand["kernels"].size() == 2);
  const json& top = cand["kernels"][0];  // by time
  CHECK(top["name"] == "silu_mul(float const*, float*, long)");  // demangled
  CHECK(top["calls_per_call"].get<double>() == doctest::Approx(2));
  CHECK(top["mean_ns"].get<double>() == doctest::Approx(8000));
  CHECK(top["share"].get<double>() == doctest::Approx(16.0 / 17));
  CHECK(top["grid"] == json::array({1024, 1, 1}));
  CHECK(top["block"] == json::array({256, 1, 1}));
  CHECK(top["registers"] == 32);
  CHECK(top["smem_static"] == 4096);
  CHECK(cand["kernels"][1]["name"] == "tail(float*)");
  CHECK(cand["achieved"]["bytes_fraction"].get<double>() == doctest::Approx(0.5).epsilon(0.01));
  const json& ref = p["reference"];
  REQUIRE(ref["kernels"].size() == 1);
  CHECK(ref["kernels"][0]["name"] == "at::native::reduce_kernel()");
  CHECK(ref["kernels"][0]["share"].get<double>() == doctest::Approx(1.0));
  CHECK(p["peaks"]["bytes_per_s"].get<double>() == doctest::Approx(4.8e12));
  // More kernels than a prompt should list: the largest 12, the rest summed.
  json reply = worker_reply();
  cuda::KernelTable wide;
  for (int i = 0; i < 20; ++i) wide.add(launch(fmt::format("k{}", i), 1, 32, 8), 1000 + i);
  reply["kernel_tables"]["candidate"] = wide.to_json();
  const json wide_profile = measured(reply).details["kernel_profile"]["candidate"];
  CHECK(wide_profile["kernels"].size() == kProfileRows);
  CHECK(wide_profile["kernels"][0]["name"] == "k19");
  CHECK(wide_profile["others"]["calls_per_call"].get<double>() == doctest::Approx(0.08));  // 8 launches over 100 calls
  // A malformed table costs the profile, never the verdict.
  reply["kernel_tables"]["candidate"] = "not a table";
  const EvalResult still = measured(reply);
  CHECK(still.ok());
  CHECK_FALSE(still.details.contains("kernel_profile"));
  CHECK(still.details.contains("kernel_profile_error"));
}

namespace {

// LLM agents on a mock server that keeps every prompt sent.
struct AgentsOnMock {
  std::mutex mutex;
  std::vector<std::string> prompts;
  llm::MockLlmServer server{0, [this](const std::string&, const std::string&, const std::string& user) -> std::string {
                              std::lock_guard<std::mutex> lock(mutex);
                              prompts.push_back(user);
                              return user.find("optimisation plans") != std::string::npos
                                         ? "1. [0.5] fuse the tail into the main kernel\n"
                                         : "```cpp\n// new kernel\n```\n";
                            }};
  Problem problem = load_problem(std::filesystem::path(KMCTS_SOURCE_DIR) / "problems/cuda/silu_mul");
  std::unique_ptr<Planner> planner;
  std::unique_ptr<Coder> coder;
  explicit AgentsOnMock(bool profile, bool ncu = true) {
    Config c;
    c.set("agents.backend=llm");
    c.set("agents.llm.api_key_env=KMCTS_TEST_NO_SUCH_VARIABLE");
    c.set_value("agents.llm.base_url", server.base_url(), "test");
    c.set_value("agents.feedback.profile", profile, "test");
    c.set_value("agents.feedback.ncu", ncu, "test");
    planner = PlannerRegistry::instance().create("planner", "llm", c);
    coder = CoderRegistry::instance().create("coder", "llm", c);
  }
};

}  // namespace

TEST_CASE("llm prompts: the Planner sees both sides' kernels, the Coder its parent's, unless switched off") {
  NodeView parent;
  parent.id = 5;
  auto result = std::make_shared<EvalResult>(measured(worker_reply()));
  parent.result = result;
  for (bool on : {true, false}) {
    CAPTURE(on);
    AgentsOnMock m(on);
    parent.source_text = std::make_shared<const std::string>(m.problem.seed_source);
    PlanContext ctx;
    ctx.problem = &m.problem;
    ctx.parent = parent;
    REQUIRE(m.planner->propose(ctx).plans.size() == 1);
    Plan plan;
    plan.text = "fuse the tail into the main kernel";
    REQUIRE(m.coder->write(m.problem, parent, plan).ok);
    REQUIRE(m.prompts.size() == 2);
    const std::string& planner = m.prompts[0];
    const std::string& coder = m.prompts[1];
    const std::string heading = "## Where its time goes (per kernel, from the GPU's records of 100 timed calls)\n";
    const std::string line =
        "- 94% silu_mul(float const*, float*, long): 2 launches per call, 8 us each; grid 1024, block 256, 32 registers, "
        "4 KiB shared\n";
    if (!on) {
      CHECK(planner.find("Where its time goes") == std::string::npos);
      CHECK(coder.find("Where its time goes") == std::string::npos);
      continue;
    }
    CHECK(planner.find(heading + "17.5 us per call (median), 3 launches per call; 50% of the GPU's peak memory "
                                 "bandwidth (the problem's bytes and FLOPs per call)\n" + line) != std::string::npos);
    CHECK(planner.find("- 6% tail(float*): 1 launch per call, 1 us each; grid 1, block 32, 8 registers") != std::string::npos);
    CHECK(planner.find("The reference, measured alongside: 20.5 us per call (median), 1 launch per call") !=
          std::string::npos);
    CHECK(planner.find("- 100% at::native::reduce_kernel(): 1 launch per call, 20 us each") !=
          std::string::npos);
    CHECK(coder.find(heading) != std::string::npos);
    CHECK(coder.find(line) != std::string::npos);
    CHECK(coder.find("The reference, measured alongside") == std::string::npos);
  }
}

TEST_CASE("llm prompts: no profile, no section: the prompt is the one recorded before profiles") {
  const std::string none = render_kernel_profile(json(), true);
  CHECK(none.empty());
  CHECK(render_kernel_profile(json{{"candidate", {{"kernels", json::array()}}}}, true).empty());
  NodeView failed;
  auto r = std::make_shared<EvalResult>(measured(worker_reply()));
  r->verdict = Verdict::compile_error;
  failed.result = r;
  CHECK(ProfileText{}.section(failed, true).empty());
}

TEST_CASE("kernelbench results: the harness's kernel tables become the profile, the reference's kernels eager's") {
  cuda::KernelTable cand, eager;
  for (int i = 0; i < 10; ++i) {
    cand.add(launch("_Z10fused_gelnPKfPfi", 4096, 256, 40), 15000);
    eager.add(launch("_ZN2at6native13reduce_kernelEv", 2048, 512, 32), 30000);
    eager.add(launch("_ZN2at6native13reduce_kernelEv", 2048, 512, 32), 30000);
  }
  json line = {{"mode", "hardened"},
               {"score", "median"},
               {"compiled", true},
               {"correct", true},
               {"trials", json::array({{{"seed", 1}, {"ok", true}, {"max_abs_diff", 0.0}}})},
               {"runtime_ms", {{"candidate", {{"times_ms", {0.015, 0.015, 0.015}}}}, {"eager", {{"times_ms", {0.06, 0.06, 0.06}}}}}},
               {"kernel_tables",
                {{"candidate", cand.to_json()}, {"reference", eager.to_json()}, {"samples_candidate", 10}, {"samples_reference", 10}}}};
  EvalResult r = result_from_harness(line, "eager");
  REQUIRE(r.ok());
  const json& p = r.details["kernel_profile"];
  CHECK(p["candidate"]["kernels"][0]["name"] == "fused_geln(float const*, float*, int)");
  CHECK(p["reference"]["kernels"][0]["name"] == "at::native::reduce_kernel()");
  CHECK(p["reference"]["kernels"][0]["calls_per_call"].get<double>() == doctest::Approx(2));
  CHECK(p["reference"]["median_ns"].get<double>() == doctest::Approx(60000));
  const std::string text = render_kernel_profile(p, true);
  CHECK(text.find("- 100% at::native::reduce_kernel(): 2 launches per call, 30 us each; grid 2048, block 512") != std::string::npos);
  // A table the harness refused, or a malformed one: no profile, the reason kept, the verdict stands.
  line["kernel_tables"] = {{"error", "a kernel table row whose grid is not three counts"}};
  r = result_from_harness(line, "eager");
  CHECK(r.ok());
  CHECK_FALSE(r.details.contains("kernel_profile"));
  CHECK(r.details["kernel_profile_error"].get<std::string>().find("grid is not three counts") != std::string::npos);
}

TEST_CASE("llm prompts: Nsight Compute's counters reach the Planner unless agents.feedback.ncu is off") {
  NodeView parent;
  parent.id = 5;
  auto result = std::make_shared<EvalResult>(measured(worker_reply()));
  result->details["hw_counters"] = cuda::with_verdicts(
      {{"kernels", json::array({{{"name", "silu_mul"}, {"dram_throughput_pct", 81.5333333333}, {"sm_throughput_pct", 20.0}}})}},
      Problem{}, cuda::Roofline{});
  parent.result = result;
  for (bool on : {true, false}) {
    CAPTURE(on);
    AgentsOnMock m(true, on);
    parent.source_text = std::make_shared<const std::string>(m.problem.seed_source);
    PlanContext ctx;
    ctx.problem = &m.problem;
    ctx.parent = parent;
    REQUIRE(m.planner->propose(ctx).plans.size() == 1);
    const bool shown = m.prompts.at(0).find("; kernel silu_mul: memory-bound: DRAM at 82% of its peak (SM 20%); fewer bytes "
                                            "moved (fusion, reuse, smaller types) is what speeds it up; counters: "
                                            "dram_throughput_pct 81.5 sm_throughput_pct 20") != std::string::npos;  // 3 digits
    CHECK(shown == on);
    CHECK(m.prompts.at(0).find("## Where its time goes") != std::string::npos);  // the profile is its own switch
  }
}
