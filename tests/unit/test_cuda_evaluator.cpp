// The CUDA evaluator's CUDA-free logic on recorded data (no GPU needed): the audit rules a
// candidate's calls must keep (the cheat suite's detection), the ptxas resource report,
// the GPU pool, the worker's answers turned into results, and the shipped CUDA problems.
// Where the CUDA toolkit is installed, every problem's reference and seed also compile.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <filesystem>
#include <thread>

#include "core/error.hpp"
#include "core/problem.hpp"
#include "hardware/cuda/audit.hpp"
#include "hardware/cuda/cuda_evaluator.hpp"
#include "hardware/cuda/gpu_pool.hpp"
#include "hardware/cuda/hw_counters.hpp"
#include "hardware/cuda/ptxas.hpp"
#include "hardware/cuda/timing_math.hpp"
#include "hardware/sandbox.hpp"
#include "scratch.hpp"

using namespace kmcts;
using namespace kmcts::cuda;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A binary that defines one kernel (its mangled name appears in it) and mentions nothing else.
const std::string kBinary = std::string("\x7f" "ELF...") + "_Z14matmul_kernelPKfS0_Pfiii" + std::string(3, '\0') + "tail";

CallTrace clean_call() {
  CallTrace t;
  t.streams = {7};
  t.kernels = {"_Z14matmul_kernelPKfS0_Pfiii"};
  return t;
}

std::vector<fs::path> cuda_problem_dirs() {
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(fs::path(KMCTS_SOURCE_DIR) / "problems" / "cuda"))
    if (entry.is_directory()) dirs.push_back(entry.path());
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

SandboxResult worker_said(const json& reply) {
  SandboxResult run;
  run.started = true;
  run.exit_code = 0;
  run.out = "noise a kernel printed\n" + reply.dump() + "\n";
  return run;
}

}  // namespace

TEST_CASE("cuda audit: a clean call passes; each planted cheat's trace breaks its rule") {
  CandidateAudit audit(7, kBinary);
  CHECK_FALSE(audit.check(clean_call()).has_value());

  CallTrace side = clean_call();
  side.streams.insert(13);  // work moved to the candidate's own stream
  auto v = audit.check(side);
  REQUIRE(v);
  CHECK(v->rule == "side_stream");
  CHECK(v->message.find("13") != std::string::npos);

  CallTrace library = clean_call();
  library.kernels.insert("sm90_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x128x8_stage3");  // cuBLAS's kernel
  v = audit.check(library);
  REQUIRE(v);
  CHECK(v->rule == "library_kernel");
  CHECK(v->message.find("sm90_xmma_gemm") != std::string::npos);

  CallTrace late = clean_call();
  late.stray_kernels = 1;  // a host thread launched after the call returned
  late.stray_names = {"_Z14matmul_kernelPKfS0_Pfiii"};
  v = audit.check(late);
  REQUIRE(v);
  CHECK(v->rule == "stray_work");

  CallTrace pinned = clean_call();
  pinned.access_policy_bytes = 64 << 20;
  v = audit.check(pinned);
  REQUIRE(v);
  CHECK(v->rule == "persisting_l2");
  CallTrace limit = clean_call();
  limit.persisting_l2_limit = 11796480;
  CHECK(audit.check(limit)->rule == "persisting_l2");

  CHECK(binary_defines(kBinary, "_Z14matmul_kernelPKfS0_Pfiii"));
  CHECK_FALSE(binary_defines(kBinary, ""));
}

TEST_CASE("cuda audit on traces recorded on the H200: clean calls pass, the planted cheats break their rules") {
  std::ifstream in(fs::path(KMCTS_SOURCE_DIR) / "tests" / "fixtures" / "cuda_traces.json");
  const json fixture = json::parse(in);
  int rejected = 0, passed = 0;
  for (const auto& call : fixture.at("calls")) {
    CAPTURE(call.at("source").get<std::string>());
    // The candidate's binary, as far as the audit reads it: the kernels its build defines.
    std::string binary;
    for (const auto& name : call.at("defines")) binary += name.get<std::string>() + '\0';
    CandidateAudit audit(call.at("trace").at("launch_stream").get<uint32_t>(), binary);
    auto violation = audit.check(call_trace_from_json(call.at("trace")));
    if (call.at("verdict") == "ok") {
      CHECK_FALSE(violation.has_value());
      ++passed;
    } else {
      REQUIRE(violation.has_value());
      CHECK(violation->rule == call.at("rule").get<std::string>());
      ++rejected;
    }
  }
  CHECK(rejected == 3);  // side stream, persisting L2, library call
  CHECK(passed >= 2);
}

TEST_CASE("cuda roofline floor: the larger of the byte and the flop time") {
  Roofline h200{67e12, 4.8e12};
  CHECK(roofline_floor_ns(0, 4.8e9, h200) == doctest::Approx(1e6));     // 4.8 GB at 4.8 TB/s: 1 ms
  CHECK(roofline_floor_ns(67e9, 1, h200) == doctest::Approx(1e6));      // 67 GFLOP at 67 TFLOP/s
  CHECK(roofline_floor_ns(67e9, 4.8e9 * 2, h200) == doctest::Approx(2e6));
  CHECK(roofline_floor_ns(1e9, 1e9, Roofline{}) == 0);                  // unknown peaks: no floor
}

TEST_CASE("cuda speedup verdict: faster only past 1 + max(3 sigma, 1%)") {
  CHECK(judge_speedup({1.5, 1.4, 1.6}, 0.002, 0.002).call == "faster");
  CHECK(judge_speedup({1.005, 1.004, 1.006}, 0.001, 0.001).call == "same");  // inside the 1% floor
  CHECK(judge_speedup({1.05, 1.02, 1.08}, 0.01, 0.01).call == "same");       // 3 sigma = 4.2%
  CHECK(judge_speedup({0.5, 0.45, 0.55}, 0.002, 0.002).call == "slower");
  CHECK(judge_speedup({1, 1, 1}, 0.01, 0.01).margin == doctest::Approx(3 * std::hypot(0.01, 0.01)));
}

TEST_CASE("ptxas report: registers, shared memory and spills per kernel") {
  const std::string log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function '_Z6kernelPf' for 'sm_90'\n"
      "ptxas info    : Function properties for _Z6kernelPf\n"
      "    16 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
      "ptxas info    : Used 40 registers, used 1 barriers, 8320 bytes smem, 400 bytes cmem[0]\n"
      "ptxas info    : Compiling entry function '_Z5otherv' for 'sm_90'\n"
      "ptxas info    : Function properties for _Z5otherv\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 12 registers, 352 bytes cmem[0]\n";
  json r = parse_ptxas_resources(log);
  REQUIRE(r["kernels"].size() == 2);
  CHECK(r["kernels"][0]["name"] == "_Z6kernelPf");
  CHECK(r["kernels"][0]["registers"] == 40);
  CHECK(r["kernels"][0]["shared_bytes"] == 8320);
  CHECK(r["kernels"][0]["barriers"] == 1);
  CHECK(r["kernels"][0]["stack_bytes"] == 16);
  CHECK(r["kernels"][1]["registers"] == 12);
  CHECK(r["max_registers"] == 40);
  CHECK(r["spill_bytes"] == 20);
  CHECK(parse_ptxas_resources("kernel.cu(3): error: bad")["kernels"].empty());
}

TEST_CASE("ncu counters: the metric table of ncu --csv, launches of one kernel averaged") {
  const std::string csv =
      "==PROF== Connected to process 4242 (/bundle/bin/kmcts-cuda-worker)\n"
      "==PROF== Profiling \"softmax_kernel\" - 0: 0%....50%....100% - 9 passes\n"
      "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\","
      "\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n"
      "\"0\",\"4242\",\"w\",\"h\",\"softmax_kernel\",\"1\",\"13\",\"(128, 1, 1)\",\"(4096, 1, 1)\",\"0\",\"9.0\","
      "\"Command line profiler metrics\",\"dram__throughput.avg.pct_of_peak_sustained_elapsed\",\"%\",\"80.5\"\n"
      "\"0\",\"4242\",\"w\",\"h\",\"softmax_kernel\",\"1\",\"13\",\"(128, 1, 1)\",\"(4096, 1, 1)\",\"0\",\"9.0\","
      "\"Command line profiler metrics\",\"lts__t_sector_hit_rate.pct\",\"%\",\"n/a\"\n"
      "\"1\",\"4242\",\"w\",\"h\",\"softmax_kernel\",\"1\",\"13\",\"(128, 1, 1)\",\"(4096, 1, 1)\",\"0\",\"9.0\","
      "\"Command line profiler metrics\",\"dram__throughput.avg.pct_of_peak_sustained_elapsed\",\"%\",\"1,079.5\"\n"
      // The worker's own input draw, profiled too (its process is followed as well): left out.
      "\"2\",\"4241\",\"w\",\"h\",\"kmcts_gpu_checks::<unnamed>::fill_kernel(void *, bool, long)\",\"1\",\"14\","
      "\"(256, 1, 1)\",\"(4096, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\","
      "\"dram__throughput.avg.pct_of_peak_sustained_elapsed\",\"%\",\"3.9\"\n"
      // As the H100's ncu 2025.3 named it (12-05): any kernel of the worker's process is left out.
      "\"3\",\"1137\",\"kmcts-cuda-worker\",\"127.0.0.1\",\"(anonymous namespace)::fill_kernel(void *, bool, long, "
      "Distribution, unsigned long, unsigned long)\",\"1\",\"14\",\"(256, 1, 1)\",\"(4096, 1, 1)\",\"0\",\"9.0\","
      "\"Command line profiler metrics\",\"dram__throughput.avg.pct_of_peak_sustained_elapsed\",\"%\",\"75.56\"\n"
      "==PROF== Disconnected from process 4242\n";
  json r = parse_ncu_csv(csv);
  REQUIRE(r["kernels"].size() == 1);
  CHECK(r["kernels"][0]["name"] == "softmax_kernel");
  CHECK(r["kernels"][0]["dram_throughput_pct"].get<double>() == doctest::Approx((80.5 + 1079.5) / 2));
  CHECK_FALSE(r["kernels"][0].contains("l2_hit_rate_pct"));  // n/a is left out
  CHECK_THROWS_AS(parse_ncu_csv("==PROF== ERR_NVGPUCTRPERM\n"), std::runtime_error);
  CHECK(counter_metrics().size() >= 5);
}

TEST_CASE("gpu pool: one lease per GPU at a time, lowest index first, released on scope exit") {
  GpuPool pool({2, 0});
  {
    auto a = pool.acquire();
    auto b = pool.acquire();
    CHECK(a.device() == 0);
    CHECK(b.device() == 2);
    std::atomic<int> got{-1};
    std::thread waiter([&] { got = pool.acquire().device(); });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK(got == -1);  // both GPUs busy: the third measurement waits
    { auto released = std::move(a); }
    waiter.join();
    CHECK(got == 0);
  }
  CHECK(pool.acquire().device() == 0);
  CHECK_THROWS_AS(GpuPool({}), std::invalid_argument);
}

TEST_CASE("gpu lists: --gpus 0,1 parses; anything else is an input error naming the option") {
  CHECK(parse_gpu_list("", "evaluator.cuda.gpus").empty());
  CHECK(parse_gpu_list("0,1, 3", "evaluator.cuda.gpus") == std::vector<int>{0, 1, 3});
  for (const char* bad : {"a", "0,,1", "-1", "1,1", "0;1", "2x"})
    CHECK_THROWS_WITH_AS(parse_gpu_list(bad, "evaluator.cuda.gpus"), doctest::Contains("evaluator.cuda.gpus"), InputError);
}

TEST_CASE("cuda worker answers: ok gets a bootstrap interval, a verdict, the roofline and the event ratio") {
  Problem problem;
  problem.flops = 0;
  problem.bytes = 4.8e6;  // 1 us at 4.8 TB/s
  std::vector<double> ref, cand;
  for (int i = 0; i < 40; ++i) ref.push_back(20000 + (i % 5) * 20), cand.push_back(10000 + (i % 5) * 10);
  json reply = {{"verdict", "ok"},
                {"reference_samples_ns", ref},
                {"candidate_samples_ns", cand},
                {"counters", {{"stop_reason", "rse_target"}}},
                {"events", {{"samples", 10}, {"reference_median_ns", 21000.0}, {"candidate_median_ns", 11000.0}}},
                {"device", {{"name", "NVIDIA H200"}, {"peak_bytes_per_s_estimate", 4.8e12}}},
                {"candidate_kernels", {"_Z6kernelPf"}}};
  EvalResult r = cuda_result_from_worker(worker_said(reply), 60, problem, Roofline{}, 1);
  REQUIRE(r.ok());
  CHECK(r.speedup == doctest::Approx(2.0).epsilon(0.01));
  CHECK(r.details["speedup_call"] == "faster");
  CHECK(r.details["speedup_ci"]["low"].get<double>() <= 2.0);
  CHECK(r.details["speedup_ci"]["high"].get<double>() >= 2.0);
  CHECK(r.details["roofline"]["floor_ns"].get<double>() == doctest::Approx(1000));
  CHECK(r.details["roofline"]["fraction"].get<double>() == doctest::Approx(0.1).epsilon(0.01));
  CHECK(r.details["events"]["candidate_events_over_cupti"].get<double>() == doctest::Approx(1.1).epsilon(0.01));
  CHECK_FALSE(r.details.contains("audit"));

  // Faster than the bytes allow: flagged for audit (still scored; a person looks).
  problem.bytes = 4.8e8;  // 100 us floor against a 10 us candidate
  r = cuda_result_from_worker(worker_said(reply), 60, problem, Roofline{}, 1);
  REQUIRE(r.ok());
  CHECK(r.details.contains("audit"));
  CHECK(r.message.find("flagged for audit") != std::string::npos);
  // A configured peak overrides the worker's estimate.
  r = cuda_result_from_worker(worker_said(reply), 60, problem, Roofline{0, 1e14}, 1);
  CHECK_FALSE(r.details.contains("audit"));
}

TEST_CASE("cuda worker answers: rejected, crash and the parent's own observations") {
  Problem problem;
  EvalResult r = cuda_result_from_worker(
      worker_said({{"verdict", "rejected"}, {"message", "rejected: work ran on stream(s) 13"}, {"details", {{"rule", "side_stream"}}}}),
      60, problem, Roofline{}, 1);
  CHECK(r.verdict == Verdict::rejected);
  CHECK(r.details["rule"] == "side_stream");
  r = cuda_result_from_worker(worker_said({{"verdict", "crash"},
                                           {"message", "crash: CUDA error in the candidate (timing): an illegal memory access"}}),
                              60, problem, Roofline{}, 1);
  CHECK(r.verdict == Verdict::crash);
  SandboxResult unstartable;  // no GPU driver on the machine: the loader, not the candidate
  unstartable.started = true, unstartable.exit_code = 127;
  unstartable.err = "kmcts-cuda-worker: error while loading shared libraries: libcuda.so.1: cannot open shared object file\n";
  r = cuda_result_from_worker(unstartable, 5, problem, Roofline{}, 1);
  CHECK(r.verdict == Verdict::infra_error);
  CHECK(r.message.find("libcuda.so.1") != std::string::npos);
  SandboxResult hung;
  hung.started = true, hung.timed_out = true;
  CHECK(cuda_result_from_worker(hung, 5, problem, Roofline{}, 1).verdict == Verdict::timeout);
  SandboxResult fat;
  fat.started = true, fat.memory_exceeded = true, fat.signal = 9;
  r = cuda_result_from_worker(fat, 5, problem, Roofline{}, 1);
  CHECK(r.verdict == Verdict::crash);
  CHECK(r.message.find("resident memory") != std::string::npos);
}

TEST_CASE("sandbox: a child over its resident-memory limit is killed and says so") {
  SandboxLimits limits;
  limits.timeout_s = 30;
  limits.max_rss_mb = 64;
  // dd fills a 256 MiB buffer over and over (minutes of copying): it must be stopped early.
  SandboxResult run = run_sandboxed({"dd", "if=/dev/zero", "of=/dev/null", "bs=256M", "count=100000"}, limits);
  REQUIRE(run.started);
  CHECK(run.memory_exceeded);
  CHECK_FALSE(run.timed_out);
  CHECK(run.wall_seconds < 15);
}

TEST_CASE("problems: every folder under problems/cuda loads, with a template, a space and roofline counts") {
  std::vector<fs::path> dirs = cuda_problem_dirs();
  CHECK(dirs.size() >= 5);
  for (const auto& dir : dirs) {
    CAPTURE(dir.string());
    Problem p = load_problem(dir);
    CHECK(p.kind == "cuda");
    CHECK(p.name == dir.filename().string());
    CHECK(p.flops > 0);
    CHECK(p.bytes > 0);
    CHECK(p.atol > 0);
    CHECK(p.rtol > 0);
    CHECK(p.reference_source.find("kmcts_cuda_kernel") != std::string::npos);
    REQUIRE(p.space.has_value());
    CHECK(p.seed_source.find("kmcts_cuda_kernel") != std::string::npos);
    CHECK(p.seed_source.find("{{") == std::string::npos);
  }
}

TEST_CASE("cuda evaluator: bad settings and the wrong kind of problem are input errors naming them") {
  Config config;
  config.set_value("evaluator.cuda.arch", "90", "test");
  CHECK_THROWS_WITH_AS(CudaEvaluatorSettings::from_config(config), doctest::Contains("evaluator.cuda.arch"), InputError);
  config.set_value("evaluator.cuda.arch", "sm_90", "test");
  config.set_value("evaluator.cuda.gpus", "zero", "test");
  CHECK_THROWS_WITH_AS(CudaEvaluatorSettings::from_config(config), doctest::Contains("evaluator.cuda.gpus"), InputError);
  config.set_value("evaluator.cuda.gpus", "0", "test");
  CudaEvaluatorSettings s = CudaEvaluatorSettings::from_config(config);
  CHECK(s.timing.warmup_ms >= 50);  // the GPU clock ramps up from idle
  Problem cpu = load_problem(fs::path(KMCTS_SOURCE_DIR) / "problems" / "cpu" / "matmul");
  CHECK_THROWS_WITH_AS(CudaEvaluator(cpu, s), doctest::Contains("kind 'cuda'"), InputError);
}

#ifdef KMCTS_TEST_HAVE_CUDA
TEST_CASE("cuda problems: every reference and seed compiles with nvcc for sm_90, with a resource report") {
  const fs::path cache = kmcts::test::fresh_dir("cuda-build");
  Config config;
  config.set_value("evaluator.cuda.arch", "sm_90", "test");
  config.set_value("evaluator.cuda.gpus", "0", "test");
  config.set_value("evaluator.cache_dir", cache.string(), "test");
  CudaEvaluatorSettings settings = CudaEvaluatorSettings::from_config(config);
  for (const auto& dir : cuda_problem_dirs()) {
    CAPTURE(dir.string());
    Problem p = load_problem(dir);
    CudaEvaluator evaluator(p, settings);
    BuildResult seed = evaluator.build(p.seed_source);
    CHECK_MESSAGE(seed.ok, seed.log);
    CHECK(seed.resources["kernels"].size() >= 1);
    CHECK(seed.resources["max_registers"].get<int>() > 0);
    // A compile error is a result with nvcc's message, naming the file agents see.
    BuildResult broken = evaluator.build(p.seed_source + "\nthis is not CUDA;\n");
    CHECK_FALSE(broken.ok);
    CHECK(broken.log.find("kernel.cu") != std::string::npos);
  }
  fs::remove_all(cache);
}
#endif
