// The kernelbench evaluator's C++ side, without torch: KernelBench-format problem files, the
// harness's JSON line turned into results, and the harness process's failures (a stand-in
// interpreter, tests/fixtures/kernelbench/fake_python.sh, answers as the candidate asks).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/problem.hpp"
#include "hardware/kernelbench/kernelbench_evaluator.hpp"
#include "hardware/kernelbench/kernelbench_hygiene.hpp"
#include "scratch.hpp"

using namespace kmcts;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const fs::path kProblems = fs::path(KMCTS_SOURCE_DIR) / "problems" / "kernelbench-format";

json harness_line(bool correct) {
  json line = {{"mode", "faithful"},
               {"compiled", true},
               {"correct", correct},
               {"tolerance", {{"generation", "current"}, {"atol", 1e-4}, {"rtol", 1e-4}}},
               {"trials", json::array({{{"seed", 1}, {"ok", true}, {"max_abs_diff", 0.0}}})}};
  if (!correct) line["trials"].push_back({{"seed", 2}, {"ok", false}, {"max_abs_diff", 0.25}});
  line["runtime_ms"] = {{"candidate", {{"mean", 0.02}, {"times_ms", {0.02, 0.02, 0.02}}}},
                        {"eager", {{"mean", 0.05}, {"times_ms", {0.04, 0.05, 0.06}}}}};
  return line;
}

KernelBenchEvaluator fake_evaluator(double timeout_s = 30, bool warm = true) {
  Config config;
  config.set_value("evaluator.kernelbench.warm", warm, "test");
  config.set_value("evaluator.kernelbench.python",
                   (fs::path(KMCTS_SOURCE_DIR) / "tests" / "fixtures" / "kernelbench" / "fake_python.sh").string(), "test");
  config.set_value("evaluator.kernelbench.timeout_s", timeout_s, "test");
  config.set_value("evaluator.cache_dir", kmcts::test::fresh_dir("kb-eval").string(), "test");
  return KernelBenchEvaluator(load_problem(kProblems / "level1" / "1_relu.py"), KernelBenchSettings::from_config(config));
}

// The hygiene check run by the stand-in interpreter, on the CPU, its cache under `dir`.
KernelBenchSettings fake_hygiene_settings(const fs::path& dir) {
  Config config;
  config.set_value("evaluator.kernelbench.python",
                   (fs::path(KMCTS_SOURCE_DIR) / "tests" / "fixtures" / "kernelbench" / "fake_python.sh").string(), "test");
  config.set_value("evaluator.cache_dir", (dir / "cache").string(), "test");
  config.set_value("evaluator.kernelbench.device", std::string("cpu"), "test");
  return KernelBenchSettings::from_config(config);
}

// How often the stand-in checked this problem (it appends a line to PROBLEM.runs each time).
size_t hygiene_runs(const fs::path& problem) {
  return fs::exists(problem.string() + ".runs") ? read_file(problem.string() + ".runs").size() / 4 : 0;
}

}  // namespace

TEST_CASE("kernelbench problems: a .py file is a problem whose seed is the file with ModelNew a subclass of Model") {
  Problem p = load_problem(kProblems / "level1" / "4_scale_bias.py");
  CHECK(p.kind == "kernelbench");
  CHECK(p.name == "4_scale_bias");
  // The reference stays as it is (its super(Model, self) and module-level names keep working).
  CHECK(p.seed_source.starts_with(p.reference_source));
  CHECK(p.seed_source.find("\nclass ModelNew(Model):\n") != std::string::npos);
  CHECK(p.reference_source.find("class Model(nn.Module)") != std::string::npos);
  CHECK(kernelbench_seed_source("class Model: pass") == kernelbench_seed_source("class Model: pass\n"));
  CHECK(!p.space.has_value());
  const fs::path dir = kmcts::test::fresh_dir("kb-bad");
  fs::create_directories(dir);
  std::ofstream(dir / "not_a_problem.py") << "import torch\nclass Model:\n    pass\n";
  CHECK_THROWS_WITH_AS(load_problem(dir / "not_a_problem.py"), doctest::Contains("get_inputs"), InputError);
  CHECK_THROWS_WITH_AS(load_problem(dir / "missing.py"), doctest::Contains("KernelBench problem file"), InputError);
}

TEST_CASE("kernelbench evaluator: the harness's line becomes a verdict, with means as KernelBench scores them") {
  EvalResult ok = result_from_harness(harness_line(true), "eager");
  CHECK(ok.verdict == Verdict::ok);
  CHECK(ok.speedup == doctest::Approx(2.5));
  CHECK(ok.candidate.samples() == 3);
  CHECK(ok.reference.mean_ns == doctest::Approx(50000));
  CHECK(ok.details["tolerance"]["generation"] == "current");
  CHECK_THROWS_WITH(result_from_harness(harness_line(true), "compile"), doctest::Contains("'compile'"));

  EvalResult wrong = result_from_harness(harness_line(false), "eager");
  CHECK(wrong.verdict == Verdict::wrong_answer);
  CHECK(wrong.message.find("trial 1") != std::string::npos);
  CHECK(wrong.message.find("0.25") != std::string::npos);

  EvalResult not_built = result_from_harness({{"compiled", false}, {"error", "RuntimeError: nvcc failed"}}, "eager");
  CHECK(not_built.verdict == Verdict::compile_error);
  CHECK(not_built.message.find("nvcc failed") != std::string::npos);
  EvalResult raised = result_from_harness({{"compiled", true}, {"error", "RuntimeError: CUDA error: illegal memory access"}}, "eager");
  CHECK(raised.verdict == Verdict::crash);

  // The harness's GPU memory reaches the result on a pass and on an out-of-memory failure, with
  // its notes (a warm harness that retires because shared tensors were never released says so).
  const json memory = {{"held_at_start", 0.4}, {"peak_allocated", 30.5}, {"peak_reserved", 36.0}, {"held_after", 0.4}};
  json measured = harness_line(true);
  measured["harness_gpu_memory_gib"] = memory;
  measured["notes"] = {"6.00 GiB of tensors shared with the candidate's process were not released"};
  const EvalResult kept = result_from_harness(measured, "eager");
  CHECK(kept.details["harness_gpu_memory_gib"] == memory);
  CHECK(kept.details["harness_notes"] == measured["notes"]);
  const EvalResult oom = result_from_harness(
      {{"infra_error", "CUDA out of memory. Tried to allocate 6.00 GiB"}, {"harness_gpu_memory_gib", memory}}, "eager");
  CHECK(oom.verdict == Verdict::infra_error);
  CHECK(oom.details["harness_gpu_memory_gib"]["peak_reserved"] == 36.0);
}

TEST_CASE("kernelbench evaluator: the harness process's failures are results naming them") {
  bool warm = true;
  SUBCASE("warm harness processes (serve.py)") {}
  SUBCASE("one harness process per candidate") { warm = false; }
  KernelBenchEvaluator evaluator = fake_evaluator(2, warm);
  auto run = [&](const std::string& source) { return evaluator.evaluate(source); };
  EvalResult ok = run("# reply: " + harness_line(true).dump() + "\nclass ModelNew: pass\n");
  CHECK(ok.verdict == Verdict::ok);
  CHECK(ok.speedup == doctest::Approx(2.5));
  CHECK(run("# reply: " + harness_line(true).dump() + "\nclass ModelNew: pass  # another\n").verdict == Verdict::ok);
  CHECK(run("# crash\n").verdict == Verdict::crash);
  CHECK(run("# reply: " + harness_line(false).dump() + "\n").verdict == Verdict::wrong_answer);  // after a crash
  if (warm) {  // a reply line without the request's nonce (the stand-in echoes it as is): forged
    json forged = harness_line(true);
    forged["retire"] = true;
    const EvalResult r = run("# reply: " + forged.dump() + "\n");
    CHECK(r.verdict == Verdict::rejected);
    CHECK(r.message.find("token") != std::string::npos);
  }
  EvalResult hung = run("# hang\n");
  CHECK(hung.verdict == Verdict::timeout);
  EvalResult garbage = run("# garbage\n");
  CHECK(garbage.verdict == Verdict::infra_error);
  CHECK(garbage.message.find("no module named torch") != std::string::npos);
  BuildResult again = evaluator.build("# crash\n");
  CHECK(again.cached);  // candidates are stored by content
}

TEST_CASE("kernelbench evaluator: bad settings are input errors naming them") {
  Config config;
  // Choice options: refused as they are set, naming the option.
  CHECK_THROWS_WITH_AS(config.set_value("evaluator.kernelbench.tolerance", "loose", "test"),
                       doctest::Contains("evaluator.kernelbench.tolerance"), InputError);
  config.set_value("evaluator.kernelbench.tolerance", "paper", "test");
  CHECK_THROWS_WITH_AS(config.set_value("evaluator.kernelbench.baseline", "inductor", "test"),
                       doctest::Contains("evaluator.kernelbench.baseline"), InputError);
  config.set_value("evaluator.kernelbench.device", "gpu0", "test");
  CHECK_THROWS_WITH_AS(KernelBenchSettings::from_config(config), doctest::Contains("evaluator.kernelbench.device"),
                       InputError);
  config.set_value("evaluator.kernelbench.device", "0", "test");
  Problem cpu = load_problem(fs::path(KMCTS_SOURCE_DIR) / "problems" / "cpu" / "matmul");
  CHECK_THROWS_WITH_AS(KernelBenchEvaluator(cpu, KernelBenchSettings::from_config(config)),
                       doctest::Contains("KernelBench-format"), InputError);
}

TEST_CASE("kernelbench evaluator: the hardened harness's verdicts, and its medians as the score") {
  json ok = harness_line(true);
  ok["mode"] = "hardened";
  ok["score"] = "median";
  ok["speedup_ci"] = {{"eager", {2.0, 3.0}}};
  EvalResult r = result_from_harness(ok, "eager");
  CHECK(r.verdict == Verdict::ok);
  CHECK(r.speedup == doctest::Approx(r.reference.median_ns / r.candidate.median_ns));
  CHECK(r.details["score"] == "median");
  CHECK(r.details["speedup_ci"]["eager"][1] == 3.0);
  CHECK(r.message.find("by medians") != std::string::npos);
  EvalResult screened = result_from_harness(
      {{"compiled", true}, {"correct", false}, {"rejected", "static screen: streams (line 3: torch.cuda.Stream)"},
       {"screen", {{"verdict", "flagged"}}}},
      "eager");
  CHECK(screened.verdict == Verdict::rejected);
  CHECK(screened.message == "rejected: static screen: streams (line 3: torch.cuda.Stream)");
  CHECK(screened.details["screen"]["verdict"] == "flagged");
  EvalResult timed = result_from_harness(
      {{"compiled", true}, {"correct", false}, {"wrong_answer", "timed call 3 of block 2 on input set 1: NaN"}}, "eager");
  CHECK(timed.verdict == Verdict::wrong_answer);
  CHECK(timed.message.find("timed call 3") != std::string::npos);
  // An "error" key fails the candidate whatever it holds (an empty one once let a forged line pass).
  CHECK(result_from_harness({{"compiled", true}, {"correct", true}, {"error", ""}}, "eager").verdict == Verdict::crash);
  CHECK(result_from_harness({{"infra_error", "OSError: no libkmcts_kb_timer.so"}}, "eager").verdict ==
        Verdict::infra_error);
  CHECK(result_from_harness({{"compiled", false}, {"timeout", true}, {"error", "no answer within 600 s"}}, "eager")
            .verdict == Verdict::timeout);
  CHECK(result_from_harness({{"compiled", true}, {"timeout", true}, {"error", "no answer within 60 s (call)"}}, "eager")
            .verdict == Verdict::timeout);
}

TEST_CASE("kernelbench evaluator: prebuilds on the CPU pool, cached by content; a compiler failure is a compile error") {
  Config config;
  config.set_value("evaluator.kernelbench.python",
                   (fs::path(KMCTS_SOURCE_DIR) / "tests" / "fixtures" / "kernelbench" / "fake_python.sh").string(), "test");
  config.set_value("evaluator.kernelbench.cuda_arch", "9.0", "test");  // no probe needed
  config.set_value("evaluator.cache_dir", kmcts::test::fresh_dir("kb-prebuild").string(), "test");
  KernelBenchEvaluator evaluator(load_problem(kProblems / "level1" / "1_relu.py"), KernelBenchSettings::from_config(config));
  CHECK(evaluator.describe()["prebuild"] == true);
  const std::string good = "# reply: " + harness_line(true).dump() + "\nfrom torch.utils.cpp_extension import load_inline\n";
  BuildResult first = evaluator.build(good);
  CHECK(first.ok);
  CHECK_FALSE(first.cached);
  CHECK(first.log.empty());  // the fake answers ok only with no GPU visible and an extensions folder
  CHECK(evaluator.build(good).cached);
  const std::string broken =
      "# prebuild: {\"ok\": false, \"build_error\": true, \"error\": \"RuntimeError: Error building extension 'k'\"}\n"
      "load_inline(name='k')\n";
  BuildResult failed = evaluator.build(broken);
  CHECK_FALSE(failed.ok);
  EvalResult r = evaluator.evaluate(broken);
  CHECK(r.verdict == Verdict::compile_error);
  CHECK(r.message.find("Error building extension") != std::string::npos);
  // Not a compiler failure (e.g. the candidate wants a GPU at import): the evaluation decides.
  BuildResult needs_gpu =
      evaluator.build("# prebuild: {\"ok\": false, \"build_error\": false, \"error\": \"no GPU\"}\nload_inline()\n");
  CHECK(needs_gpu.ok);
  CHECK(needs_gpu.log.find("no GPU") != std::string::npos);
  // Nothing to build: no prebuild process at all (its answer would have been a build error).
  BuildResult plain = evaluator.build("# prebuild: {\"ok\": false, \"build_error\": true, \"error\": \"x\"}\n");
  CHECK(plain.ok);
  CHECK(plain.seconds == 0);
}

TEST_CASE("kernelbench hygiene: findings are cached by the problem file's content, errors are not") {
  const fs::path dir = kmcts::test::fresh_dir("kb-hygiene");
  fs::create_directories(dir);
  const KernelBenchSettings settings = fake_hygiene_settings(dir);
  const fs::path problem = dir / "p.py";
  std::ofstream(problem) << "# a problem\n";
  const json first = kernelbench_hygiene(problem, settings);
  CHECK_FALSE(first.contains("cached"));
  const json again = kernelbench_hygiene(problem, settings);
  CHECK(again.value("cached", false));
  CHECK(again["findings"] == first["findings"]);
  CHECK(hygiene_runs(problem) == 1);  // the rerun paid nothing
  std::ofstream(problem, std::ios::app) << "# edited\n";  // another file: checked again
  CHECK_FALSE(kernelbench_hygiene(problem, settings).contains("cached"));
  CHECK(hygiene_runs(problem) == 2);
  const fs::path broken = dir / "broken.py";
  std::ofstream(broken) << "# hygiene-error\n";
  CHECK(kernelbench_hygiene(broken, settings).contains("error"));
  CHECK(kernelbench_hygiene(broken, settings).contains("error"));
  CHECK(hygiene_runs(broken) == 2);  // an error may not happen again: not cached
}

TEST_CASE("kernelbench hygiene: a campaign's problems are checked in one process, and each then answers from the cache") {
  const fs::path dir = kmcts::test::fresh_dir("kb-hygiene-batch");
  fs::create_directories(dir);
  const KernelBenchSettings settings = fake_hygiene_settings(dir);
  std::vector<fs::path> files;
  const std::vector<std::pair<const char*, const char*>> problems = {
      {"p0.py", "# a"}, {"p1.py", "# b"}, {"p2.py", "# hygiene-error"}, {"p3.py", "# hygiene-die"}, {"p4.py", "# e"}};
  for (const auto& [name, head] : problems) {
    files.push_back(dir / name);
    std::ofstream(files.back()) << head << "\n";
  }
  // One process, in the order given: p0 and p1 found clean, p2 an error (not cached), the
  // process dies at p3, and p4 is never reached.
  const HygieneBatch first = prefill_hygiene(files, settings);
  CHECK(first.checked == 2);
  CHECK(first.failed == 1);
  CHECK(first.cached_before == 0);
  CHECK(hygiene_runs(files[4]) == 0);
  // Each problem's own check: the clean ones from the cache, the rest alone.
  for (size_t i : {0, 1}) {
    CHECK(kernelbench_hygiene(files[i], settings).value("cached", false));
    CHECK(hygiene_runs(files[i]) == 1);
  }
  CHECK(kernelbench_hygiene(files[4], settings)["findings"].is_array());
  CHECK(hygiene_runs(files[4]) == 1);
  const HygieneBatch again = prefill_hygiene(files, settings);
  CHECK(again.cached_before == 3);  // p0, p1 and p4 (checked alone just now)
  CHECK(again.checked == 0);
  CHECK(hygiene_runs(files[0]) == 1);
}

TEST_CASE("kernelbench results: a speedup KernelBench flags as excessive says so") {
  json line = harness_line(true);
  CHECK_FALSE(result_from_harness(line, "eager").details.contains("excessive_speedup"));
  line["excessive_speedup"] = true;
  const EvalResult r = result_from_harness(line, "eager");
  CHECK(r.verdict == Verdict::ok);
  CHECK(r.details["excessive_speedup"] == true);
  CHECK(r.message.find("possible reward hack") != std::string::npos);
}

TEST_CASE("kernelbench evaluator: ncu's counters of the best measurements, and memcheck's diagnosis of a fault") {
  // ncu and compute-sanitizer are stood in for by tests/fixtures/kernelbench/fake_gpu_tool.sh
  // (their outputs as on the H200), the harness by fake_python.sh.
  const std::string tool = (fs::path(KMCTS_SOURCE_DIR) / "tests" / "fixtures" / "kernelbench" / "fake_gpu_tool.sh").string();
  Config config;
  config.set_value("evaluator.kernelbench.python",
                   (fs::path(KMCTS_SOURCE_DIR) / "tests" / "fixtures" / "kernelbench" / "fake_python.sh").string(), "test");
  config.set_value("evaluator.cache_dir", kmcts::test::fresh_dir("kb-feedback").string(), "test");
  config.set_value("evaluator.kernelbench.profile", true, "test");
  config.set_value("evaluator.cuda.ncu", tool, "test");
  config.set_value("evaluator.compute_sanitizer", tool, "test");
  KernelBenchEvaluator evaluator(load_problem(kProblems / "level1" / "1_relu.py"), KernelBenchSettings::from_config(config));
  auto reply = [](double candidate_ms) {
    json line = harness_line(true);
    line["device"] = "NVIDIA H200";
    line["runtime_ms"]["candidate"] = {{"mean", candidate_ms}, {"times_ms", {candidate_ms, candidate_ms}}};
    return line.dump();
  };

  const EvalResult first = evaluator.evaluate("# reply: " + reply(0.02) + "\nclass ModelNew: pass\n");
  REQUIRE(first.verdict == Verdict::ok);
  if (first.details.value("feedback_error", std::string()).find("no view of its own") != std::string::npos) {
    // No mount namespace here: one_call.py would run the candidate with the harness's rights, so
    // neither tool runs (and says so).
    CHECK_FALSE(first.details.contains("hw_counters"));
    MESSAGE("no private view for the harness here: the profile and the diagnosis are refused, as they must be");
    return;
  }
  REQUIRE(first.details.contains("hw_counters"));
  const json& kernel = first.details["hw_counters"]["kernels"][0];
  CHECK(kernel["name"] == "relu_kernel(const float *, float *, long)");
  CHECK(kernel["dram_throughput_pct"] == doctest::Approx(88.5));
  CHECK(kernel["bottleneck_kind"] == "memory-bound");
  CHECK(first.details.contains("profile_seconds"));
  // Slower than the best so far: not profiled ("best").
  const EvalResult slower = evaluator.evaluate("# reply: " + reply(0.04) + "\nclass ModelNew: pass  # slower\n");
  CHECK(slower.verdict == Verdict::ok);
  CHECK_FALSE(slower.details.contains("hw_counters"));

  // A fault: the call again under memcheck names the kernel, thread and address.
  json fault = {{"mode", "hardened"}, {"compiled", true},
                {"error", "RuntimeError: CUDA error: an illegal memory access was encountered"}};
  const EvalResult crashed = evaluator.evaluate("# reply: " + fault.dump() + "\n");
  REQUIRE(crashed.verdict == Verdict::crash);
  REQUIRE(crashed.details.contains("fault"));
  CHECK(crashed.details["fault"]["kernel"] == "relu_kernel(const float *, float *, long)");
  CHECK(crashed.details["fault"]["thread"] == "(0,0,0)");
  CHECK(crashed.message.find("; compute-sanitizer: Invalid __global__ write of size 4 bytes in relu_kernel") !=
        std::string::npos);
  // A crash that is no memory fault is not diagnosed.
  fault["error"] = "RuntimeError: shape mismatch";
  const EvalResult other = evaluator.evaluate("# reply: " + fault.dump() + "\n");
  CHECK(other.verdict == Verdict::crash);
  CHECK_FALSE(other.details.contains("diagnosis_seconds"));
}
