#include "hardware/cpu/cpu_evaluator.hpp"
#include "core/text.hpp"
#include "hardware/companion.hpp"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "core/error.hpp"
#include "hardware/sandbox.hpp"
#include "hardware/worker_result.hpp"

// ---- Options of the cpu evaluator only (the shared ones: hardware/measure_settings.cpp) ----
// 16 MiB. The worker first evicts the kernels' own inputs and outputs line by line (clflush /
// dc civac, every level, whatever the L3 size; for sets up to 64 MiB). This buffer only has
// to displace the rest - kernel scratch, the other kernel's lines, TLB entries - from the
// private L1/L2 (<= 4 MiB per core on current parts) and much of a typical 16-32 MiB L3
// slice, at ~2-3 ms per sample. A buffer big enough for huge server L3s (260 MiB on the Xeon
// this was written on) would cost ~50+ ms per sample and starve small kernels of samples.
// describe() reports the detected L3 size. 0 = no buffer (the line eviction still runs).
KMCTS_OPTION("evaluator.flush_mb", Int, 16, 0.0, 65536.0,
             "Cache-flush buffer written before every timed sample, MiB, after the kernels' own data is evicted (0 = none)")
KMCTS_OPTION("evaluator.compiler", String, "c++", std::nullopt, std::nullopt, "Host C++ compiler for cpu kernels")
KMCTS_OPTION("evaluator.cpu_worker", String, "", std::nullopt, std::nullopt,
             "Path of kmcts-cpu-worker; empty = next to the running executable")

namespace kmcts {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;



}  // namespace

CompilerFlavor cpu_compiler_flavor() {
  const fs::path abi = data_dir("abi/cpu", KMCTS_CPU_ABI_DIR);
  return {"cpu", "kernel.cpp", {"-O3", "-march=native", "-std=c++17", "-shared", "-fPIC", fmt::format("-I{}", abi.string())},
          {abi / "kmcts_cpu.h"}, nullptr};
}

CpuEvaluatorSettings CpuEvaluatorSettings::from_config(const Config& c) {
  CpuEvaluatorSettings s;
  static_cast<MeasureSettings&>(s) = MeasureSettings::from_config(c);
  s.timing.flush_mb = c.get_int("evaluator.flush_mb");
  s.compiler = c.get_string("evaluator.compiler");
  s.cpu_worker = c.get_string("evaluator.cpu_worker");
  if (s.compiler.empty()) throw InputError("evaluator.compiler must not be empty");
  return s;
}

CpuEvaluator::CpuEvaluator(Problem problem, CpuEvaluatorSettings settings)
    : problem_(std::move(problem)),
      settings_(std::move(settings)),
      compiler_(CompilerSettings{settings_.compiler, settings_.cache_dir, settings_.compile_timeout_s, settings_.memory_mb,
                                 problem_.compile_flags},
                cpu_compiler_flavor()),
      worker_(find_worker_executable(settings_.cpu_worker, "kmcts-cpu-worker", "evaluator.cpu_worker",
                                     "build target kmcts-cpu-worker")) {
  if (problem_.kind != "cpu")
    throw InputError(fmt::format("problem '{}' is of kind '{}'; the cpu evaluator runs only kind 'cpu'", problem_.name,
                                 problem_.kind));
  reclaim_worker_folders("kmcts-cpu");  // what a process killed mid-measurement left behind
}

BuildResult CpuEvaluator::build(const std::string& source) { return compiler_.compile(source); }

const BuildResult& CpuEvaluator::reference() {
  return reference_.get(compiler_, problem_.reference_source, problem_.reference_flags);
}

// The job file: worker_job_json (measure_settings.hpp); the cache flush is in its timing plan.
json CpuEvaluator::job_json(const std::string& reference_so, const std::string& candidate_so) const {
  return worker_job_json(problem_, settings_, reference_so, candidate_so);
}

EvalResult CpuEvaluator::measure(const BuildResult& build) {
  if (!build.ok) return compile_error_result(build);
  try {
    const BuildResult& ref = reference();
    if (!ref.ok)
      return failed_result(Verdict::infra_error, "the reference kernel does not compile: " + first_line(ref.log), ref.log);
    return run_worker(build, ref);
  } catch (const std::exception& e) {
    return failed_result(Verdict::infra_error, std::string("cpu evaluator: ") + e.what());
  }
}

EvalResult CpuEvaluator::run_worker(const BuildResult& candidate, const BuildResult& ref) {
  if (!fs::exists(worker_))
    return failed_result(Verdict::infra_error, fmt::format("the cpu worker '{}' does not exist", worker_.string()));
  const WorkerFolder folder("kmcts-cpu", ref.artifact, candidate.artifact);
  const std::string job = folder.write_job("job.json", job_json(folder.reference(), folder.candidate()));
  SandboxLimits limits = WorkerFolder::limits(settings_.timeout_s, settings_.timing.max_samples);
  limits.memory_mb = settings_.memory_mb;
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer reserves terabytes of shadow address space, so the (equally
  // sanitized) worker could not even start under RLIMIT_AS.
  limits.memory_mb = 0;
#endif
  SandboxResult run = run_sandboxed({worker_.string(), job}, limits, folder.dir());
  if (!run.started) return failed_result(Verdict::infra_error, "cannot run the cpu worker: " + run.error);
  EvalResult result = result_from_worker(run, settings_.timeout_s, "cpu worker");
  result.run_seconds = run.wall_seconds;
  result.details["confinement"] = with_host_files(run.confinement);
  return result;
}

json CpuEvaluator::describe() const {
  long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  return {{"evaluator", "cpu"},
          {"compiler", settings_.compiler},
          {"compiler_version", compiler_.version()},
          {"compile_command", compiler_.command("kernel.cpp", "kernel.so")},
          {"cache_dir", compiler_.object_dir().string()},
          {"worker", worker_.string()},
          {"hardware_threads", std::thread::hardware_concurrency()},
          {"l3_cache_bytes", l3 > 0 ? l3 : 0},
          {"flush_mb", settings_.timing.flush_mb},
          {"timeout_s", settings_.timeout_s},
          {"memory_mb", settings_.memory_mb}};
}

}  // namespace kmcts

KMCTS_REGISTER(kmcts::EvaluatorRegistry, "cpu",
               [](const kmcts::Problem& problem, const kmcts::Config& config) -> std::unique_ptr<kmcts::Evaluator> {
                 return std::make_unique<kmcts::CpuEvaluator>(problem, kmcts::CpuEvaluatorSettings::from_config(config));
               })
