// The hip evaluator (hardware/hip/hip_evaluator.hpp): settings, refusals, and its whole path -
// hipcc builds, the worker run under rocprofv3, the traces read by pid, the audit, the statistics -
// against a stand-in rocprofv3 that replays a recorded run (tests/fixtures/rocprof/silu_mul_run).
// No AMD GPU has run any of it.
#include <doctest/doctest.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>

#include "core/error.hpp"
#include "core/problem.hpp"
#include "hardware/confine.hpp"
#include "hardware/hip/hip_evaluator.hpp"
#include "scratch.hpp"

using namespace kmcts;
namespace fs = std::filesystem;

namespace {

const fs::path kRuns = fs::path(KMCTS_SOURCE_DIR) / "tests/fixtures/rocprof/silu_mul_run";

Problem silu_mul() { return load_problem(fs::path(KMCTS_SOURCE_DIR) / "problems/hip/silu_mul"); }

}  // namespace

TEST_CASE("hip evaluator: bad settings and the wrong kind of problem are input errors naming them") {
  Config config;
  config.set_value("evaluator.hip.arch", "942", "test");
  CHECK_THROWS_WITH_AS(HipEvaluatorSettings::from_config(config), doctest::Contains("evaluator.hip.arch"), InputError);
  config.set_value("evaluator.hip.arch", "gfx942", "test");
  config.set_value("evaluator.hip.gpus", "first", "test");
  CHECK_THROWS_WITH_AS(HipEvaluatorSettings::from_config(config), doctest::Contains("evaluator.hip.gpus"), InputError);
  config.set_value("evaluator.hip.gpus", "0", "test");
  const HipEvaluatorSettings s = HipEvaluatorSettings::from_config(config);
  CHECK(s.timing.warmup_ms >= 50);
  const Problem cpu = load_problem(fs::path(KMCTS_SOURCE_DIR) / "problems/cpu/matmul");
  CHECK_THROWS_WITH_AS(HipEvaluator(cpu, s), doctest::Contains("kind 'hip'"), InputError);
  config.set_value("evaluator.hip.worker", "/nonexistent/kmcts-hip-worker", "test");
  CHECK_THROWS_WITH_AS(HipEvaluator(silu_mul(), HipEvaluatorSettings::from_config(config)),
                       doctest::Contains("kmcts-hip-worker"), InputError);
}

#if defined(KMCTS_TEST_HIPCC) && defined(KMCTS_TEST_HIP_WORKER)
TEST_CASE("hip evaluator: without Landlock the candidate could rewrite the reference's trace: confined, it is not measured") {
  CHECK(hip_trace_separation_error(true, 4).empty());
  CHECK(hip_trace_separation_error(false, 0).empty());  // unconfined: the user's choice
  const std::string why = hip_trace_separation_error(true, 0);
  CHECK(why.find("no Landlock") != std::string::npos);
  CHECK(why.find("evaluator.confine=false") != std::string::npos);
}

TEST_CASE("hip evaluator: a candidate stopped for filling its trace folder is rejected") {
  SandboxResult run;
  run.started = true, run.folder_exceeded = true, run.signal = SIGKILL;
  const EvalResult r = hip_result_from_traced_run(run, "/nonexistent", "", 10, Problem{}, cuda::Roofline{}, 1);
  CHECK(r.verdict == Verdict::rejected);
  CHECK(r.details["rule"] == "trace_tampered");
  CHECK(r.message.find("filled its trace folder past 512 MiB or 64 files") != std::string::npos);
}

TEST_CASE("hip evaluator: a recorded run replayed by a stand-in rocprofv3 is timed from its traces and audited") {
  const fs::path cache = kmcts::test::fresh_dir("hip-evaluator");
  Config config;
  config.set_value("evaluator.hip.arch", "gfx90a", "test");  // Debian's hipcc stops before gfx942
  config.set_value("evaluator.hip.gpus", "0", "test");
  config.set_value("evaluator.hip.hipcc", KMCTS_TEST_HIPCC, "test");
  config.set_value("evaluator.hip.worker", KMCTS_TEST_HIP_WORKER, "test");
  config.set_value("evaluator.hip.rocprofv3", (fs::path(KMCTS_SOURCE_DIR) / "tests/fixtures/rocprof/fake_rocprofv3.sh").string(),
                   "test");
  config.set_value("evaluator.cache_dir", cache.string(), "test");
  // A source tree under /tmp (a clone there) is hidden from a confined child by its private
  // /tmp, and the stand-in with it: there the run goes unconfined; elsewhere, as users run it.
  struct Restore {
    bool was = confinement_enabled();
    ~Restore() { set_confinement_enabled(was); }  // also when a REQUIRE ends the case early
  } restore;
  if (std::string(KMCTS_SOURCE_DIR).rfind("/tmp/", 0) == 0) {
    MESSAGE("the source tree lies under /tmp, which a confined child does not see: measured unconfined");
    set_confinement_enabled(false);
  }
  const Problem problem = silu_mul();
  HipEvaluator evaluator(problem, HipEvaluatorSettings::from_config(config));
  CHECK(evaluator.describe()["arch"] == "gfx90a");
  const auto command = evaluator.traced_command("./job.json", "./traces");
  CHECK(std::find(command.begin(), command.end(), "--mangled-kernels") != command.end());
  CHECK(std::find(command.begin(), command.end(), "KMCTS_TRACE_DIR=./traces") != command.end());
  // The recorded run's kernel is the reference's: measure the reference as the candidate.
  const BuildResult build = evaluator.build(problem.reference_source);
  REQUIRE_MESSAGE(build.ok, build.log);

  SUBCASE("honest: the samples are the traces' unions, not the worker's provisional windows") {
    setenv("KMCTS_FAKE_ROCPROF_CASE", (kRuns / "honest").c_str(), 1);
    const EvalResult r = evaluator.measure(build);
    REQUIRE_MESSAGE(r.ok(), std::string(r.message + " / " + r.log));
    CHECK(r.details["timing_source"] == "rocprofv3");
    CHECK(r.details["counters"]["trace_clock"] == "boot");
    REQUIRE(r.candidate.samples_ns.size() == 12);
    for (double ns : r.candidate.samples_ns) CHECK((ns >= 40000 && ns < 40800));  // the kernels' own times
    CHECK(r.speedup == doctest::Approx(1.0).epsilon(0.03));
    CHECK(r.details.contains("speedup_ci"));
    REQUIRE(r.details.contains("kernel_profile"));
    // Each kernel's shape and resources from the trace's columns: 1,048,576 work-items in
    // workgroups of 256, 12 VGPRs (the recorded run's rows).
    const std::string profile = r.details["kernel_profile"].dump();
    CAPTURE(profile);
    CHECK(profile.find("4096") != std::string::npos);
    CHECK(profile.find("\"registers\":12") != std::string::npos);
  }
  SUBCASE("rocprofv3 failing or talking after the worker's ok still times from the traces, never the provisional samples") {
    setenv("KMCTS_FAKE_ROCPROF_CASE", (kRuns / "honest").c_str(), 1);
    setenv("KMCTS_FAKE_ROCPROF_EXIT", "3", 1);
    setenv("KMCTS_FAKE_ROCPROF_TAIL", "rocprofv3: 2 output files written", 1);
    const EvalResult r = evaluator.measure(build);
    unsetenv("KMCTS_FAKE_ROCPROF_EXIT");
    unsetenv("KMCTS_FAKE_ROCPROF_TAIL");
    REQUIRE_MESSAGE(r.ok(), r.message);
    CHECK(r.details["rocprofv3_exit"] == 3);
    CHECK(r.candidate.median_ns < 40800);  // the provisional windows are about 50 us
  }
  SUBCASE("a second queue in the candidate's calls is rejected") {
    setenv("KMCTS_FAKE_ROCPROF_CASE", (kRuns / "side_queue").c_str(), 1);
    const EvalResult r = evaluator.measure(build);
    CHECK(r.verdict == Verdict::rejected);
    CHECK(r.details["rule"] == "side_stream");
    CHECK(r.message.find("queue(s) 2 besides the launch queue 1") != std::string::npos);
  }
  SUBCASE("a candidate's host that exited cleanly and left no trace is rejected: its trace was tampered with") {
    setenv("KMCTS_FAKE_ROCPROF_CASE", (kRuns / "lost_trace").c_str(), 1);
    const EvalResult r = evaluator.measure(build);
    CHECK(r.verdict == Verdict::rejected);
    CHECK(r.details["rule"] == "trace_tampered");
    CHECK(r.message.find("no kernel trace of process 102") != std::string::npos);
  }
  SUBCASE("a candidate's trace turned into a link is never followed") {
    setenv("KMCTS_FAKE_ROCPROF_CASE", (kRuns / "honest").c_str(), 1);
    setenv("KMCTS_FAKE_ROCPROF_LINK", "/dev/zero", 1);
    const EvalResult r = evaluator.measure(build);
    unsetenv("KMCTS_FAKE_ROCPROF_LINK");
    CHECK(r.verdict == Verdict::rejected);
    CHECK(r.details["rule"] == "trace_tampered");
    CHECK(r.message.find("cannot open 102_kernel_trace.csv") != std::string::npos);
  }
  unsetenv("KMCTS_FAKE_ROCPROF_CASE");
  fs::remove_all(cache);
}
#endif
