#include "hardware/hip/hip_evaluator.hpp"

#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/options.hpp"
#include "core/registry.hpp"
#include "core/text.hpp"
#include "hardware/companion.hpp"
#include "hardware/cuda/cuda_evaluator.hpp"
#include "hardware/hip/devices.hpp"
#include "hardware/hip/hip_compiler.hpp"
#include "hardware/hip/rocprof_timing.hpp"
#include "hardware/worker/landlock.hpp"
#include "hardware/worker_result.hpp"

// ---- Options of the hip evaluator (the shared ones: hardware/measure_settings.cpp) ----
KMCTS_OPTION("evaluator.hip.hipcc", String, "", std::nullopt, std::nullopt,
             "hipcc to build HIP kernels with; empty = $ROCM_PATH/bin/hipcc, /opt/rocm/bin/hipcc, or hipcc in PATH")
KMCTS_OPTION("evaluator.hip.arch", String, "", std::nullopt, std::nullopt,
             "AMD GPU architecture to build for, e.g. gfx942 (hipcc --offload-arch); empty = the first GPU's, as "
             "rocminfo lists it")
KMCTS_OPTION("evaluator.hip.gpus", String, "", std::nullopt, std::nullopt,
             "HIP device indices to measure on, e.g. 0,1 (one measurement per GPU at a time); empty = every GPU "
             "agent rocminfo lists")
KMCTS_OPTION("evaluator.hip.worker", String, "", std::nullopt, std::nullopt,
             "Path of kmcts-hip-worker; empty = next to the running executable")
KMCTS_OPTION("evaluator.hip.rocprofv3", String, "", std::nullopt, std::nullopt,
             "rocprofv3, which traces every measurement (kernel dispatches and memory copies on every queue); "
             "empty = found like hipcc")
KMCTS_OPTION("evaluator.hip.rocminfo", String, "", std::nullopt, std::nullopt,
             "rocminfo, which lists the AMD GPUs and their architectures; empty = found like hipcc")
KMCTS_OPTION("evaluator.hip.flush_mb", Int, 0, 0.0, 65536.0,
             "Cache flush written before every timed sample, MiB; 0 = max(2 x the GPU's L2, 512 MiB: MI300X's "
             "Infinity Cache is 256 MB)")
KMCTS_OPTION("evaluator.hip.event_samples", Int, 10, 0.0, 10000.0,
             "hipEvent samples per kernel after the traced timing, as a cross-check of rocprofv3's times")

namespace kmcts {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr double kMinWarmupMs = 50;        // as on CUDA: clocks ramp up from idle
constexpr double kShortKernelNs = 10000;   // kernels faster than this need twice the timed time
constexpr const char* kTraceDir = "traces";  // in the worker's folder
// What the candidate's trace folder may hold: an honest run's is a few MB in two files.
constexpr uint64_t kMaxCandidateTraceBytes = 512ull << 20;
constexpr uint64_t kMaxCandidateTraceFiles = 64;

}  // namespace

HipEvaluatorSettings HipEvaluatorSettings::from_config(const Config& c) {
  HipEvaluatorSettings s;
  static_cast<MeasureSettings&>(s) = MeasureSettings::from_config(c);
  s.timing.warmup_ms = std::max(s.timing.warmup_ms, kMinWarmupMs);
  s.hipcc = c.get_string("evaluator.hip.hipcc");
  s.arch = c.get_string("evaluator.hip.arch");
  if (!s.arch.empty() && (s.arch.rfind("gfx", 0) != 0 || s.arch.size() < 5))
    throw InputError(fmt::format("evaluator.hip.arch: '{}' is not an architecture like gfx942", s.arch));
  s.gpus = parse_gpu_list(c.get_string("evaluator.hip.gpus"), "evaluator.hip.gpus");
  s.worker = c.get_string("evaluator.hip.worker");
  s.rocprofv3 = c.get_string("evaluator.hip.rocprofv3");
  s.rocminfo = c.get_string("evaluator.hip.rocminfo");
  s.flush_mb = c.get_int("evaluator.hip.flush_mb");
  s.event_samples = static_cast<int>(c.get_int("evaluator.hip.event_samples"));
  return s;
}

HipEvaluator::HipEvaluator(Problem problem, HipEvaluatorSettings settings)
    : problem_(std::move(problem)), settings_(std::move(settings)) {
  if (problem_.kind != "hip")
    throw InputError(fmt::format("problem '{}' is of kind '{}'; the hip evaluator runs only kind 'hip'", problem_.name,
                                 problem_.kind));
  reclaim_worker_folders("kmcts-hip");
  worker_ = find_worker_executable(settings_.worker, "kmcts-hip-worker", "evaluator.hip.worker",
                                   "this kmcts was built without hipcc and the HIP runtime");
  rocprofv3_ = hip::find_hip_tool(settings_.rocprofv3, "rocprofv3");
  SandboxLimits limits;
  limits.timeout_s = 60;
  if (const SandboxResult version = run_sandboxed({rocprofv3_, "--version"}, limits); !version.started)
    throw InputError(fmt::format("cannot run rocprofv3 ({}): HIP measurements are timed by its traces (ROCm 6.2 or later "
                                 "has it; evaluator.hip.rocprofv3 names one)",
                                 version.error));
  if (settings_.arch.empty() || settings_.gpus.empty()) {
    const SandboxResult info = run_sandboxed({hip::find_hip_tool(settings_.rocminfo, "rocminfo")}, limits);
    const std::vector<hip::HipGpu> gpus = info.exited_cleanly() ? hip::parse_rocminfo(info.out) : std::vector<hip::HipGpu>{};
    if (gpus.empty())
      throw InputError(fmt::format("no AMD GPU found (rocminfo: {}); set evaluator.hip.arch and evaluator.hip.gpus to "
                                   "build and measure anyway",
                                   info.started ? (info.exited_cleanly() ? "no GPU agent" : first_line(info.err + info.out))
                                                : info.error));
    if (settings_.gpus.empty())
      for (size_t i = 0; i < gpus.size(); ++i) settings_.gpus.push_back(static_cast<int>(i));
    if (settings_.arch.empty()) {
      const auto first = static_cast<size_t>(settings_.gpus.front());
      if (first >= gpus.size())
        throw InputError(fmt::format("evaluator.hip.gpus: GPU {} is not among the {} rocminfo lists", first, gpus.size()));
      settings_.arch = gpus[first].arch;
    }
  }
  compiler_.emplace(CompilerSettings{hip::find_hip_tool(settings_.hipcc, "hipcc"), settings_.cache_dir,
                                     settings_.compile_timeout_s, settings_.memory_mb, problem_.compile_flags},
                    hip::hip_compiler_flavor(settings_.arch), "evaluator.hip.hipcc");
  pool_.emplace(settings_.gpus);
}

BuildResult HipEvaluator::build(const std::string& source) { return compiler_->compile(source); }

const BuildResult& HipEvaluator::reference() {
  return reference_.get(*compiler_, problem_.reference_source, problem_.reference_flags);
}

json HipEvaluator::job_json(const std::string& reference_so, const std::string& candidate_so, int device) const {
  json job = worker_job_json(problem_, settings_, reference_so, candidate_so);
  job["cuda"] = {{"device", device},
                 {"flush_bytes", static_cast<uint64_t>(settings_.flush_mb) << 20},
                 {"min_clock_ratio", 0.0},  // no SM clock is read on AMD GPUs
                 {"event_samples", settings_.event_samples},
                 {"short_kernel_ns", kShortKernelNs},
                 {"protocol", "kmcts"}};
  return job;
}

std::vector<std::string> HipEvaluator::traced_command(const std::string& job, const std::string& trace_dir) const {
  // Each host writes its trace in TRACE_DIR/ROLE, the one folder its Landlock lets it write
  // (worker/host_serve.hpp; the worker sets KMCTS_TRACE_ROLE for each): the candidate cannot
  // reach the reference's trace.
  return {"/usr/bin/env", "KMCTS_TRACE_DIR=" + trace_dir, rocprofv3_, "--kernel-trace", "--memory-copy-trace",
          "--mangled-kernels", "--output-format", "csv", "-d", trace_dir + "/%env{KMCTS_TRACE_ROLE}%", "-o", "%pid%", "--",
          worker_.string(), job};
}

std::string hip_trace_separation_error(bool confine, int landlock_abi) {
  if (!confine || landlock_abi > 0) return "";
  return "this kernel has no Landlock (Linux 5.13 or later), which keeps each kernel host to its own rocprofv3 trace "
         "folder: without it the candidate's process could rewrite the reference's trace. Measure on a kernel with "
         "Landlock, or set evaluator.confine=false to measure without any confinement";
}

EvalResult HipEvaluator::measure(const BuildResult& build) {
  if (!build.ok) return compile_error_result(build);
  if (const std::string why = hip_trace_separation_error(confinement_enabled(), landlock_abi()); !why.empty())
    return failed_result(Verdict::infra_error, "hip evaluator: " + why);
  try {
    const BuildResult& ref = reference();
    if (!ref.ok)
      return failed_result(Verdict::infra_error, "the reference kernel does not compile: " + first_line(ref.log), ref.log);
    const WorkerFolder folder("kmcts-hip", ref.artifact, build.artifact);
    cuda::GpuPool::Lease gpu = pool_->acquire();
    const std::string job = folder.write_job("job.json", job_json(folder.reference(), folder.candidate(), gpu.device()));
    const fs::path traces = folder.dir() / kTraceDir;
    for (const char* role : {"reference", "candidate"}) fs::create_directories(traces / role);
    SandboxLimits limits = WorkerFolder::limits(settings_.timeout_s, settings_.timing.max_samples);
    limits.max_rss_mb = settings_.memory_mb;
    // The one place the run may write: rocprofv3's traces (a few MB for thousands of calls), at
    // a path of its private /tmp where it has a view of its own (its folder is read-only there).
    const bool view = limits.confine && confinement_for(limits, getuid()).mount_ns;
    const std::string seen = view ? "/tmp/kmcts-traces" : traces.string();
    limits.binds.push_back({traces.string(), seen, true});
    limits.max_file_bytes = 256ull << 20;
    // The candidate's folder is writable from inside its process, file by file up to the limit
    // above: in all, it may hold what a long honest run writes many times over, and no more.
    limits.watched_folder = traces / "candidate";
    limits.max_folder_bytes = kMaxCandidateTraceBytes, limits.max_folder_entries = kMaxCandidateTraceFiles;
    // The result lists every call's window (about 150 bytes each, warm-up calls too), and
    // rocprofv3 talks.
    limits.max_output_bytes = std::max<size_t>(limits.max_output_bytes, 32u << 20);
    const SandboxResult run = run_sandboxed(traced_command(job, seen), limits, folder.dir());
    if (!run.started) return failed_result(Verdict::infra_error, "cannot run rocprofv3 with the HIP worker: " + run.error);
    EvalResult result = hip_result_from_traced_run(run, traces, read_file(folder.dir() / "candidate.so"),
                                                   settings_.timeout_s, problem_, settings_.peaks,
                                                   static_cast<uint64_t>(settings_.input_seed));
    result.details["gpu"] = gpu.device();
    result.details["confinement"] = with_host_files(run.confinement);
    result.run_seconds = run.wall_seconds;
    return result;
  } catch (const std::exception& e) {
    return failed_result(Verdict::infra_error, std::string("hip evaluator: ") + e.what());
  }
}

EvalResult hip_result_from_traced_run(const SandboxResult& run, const fs::path& trace_dir, const std::string& candidate_binary,
                                      double timeout_s, const Problem& problem, const cuda::Roofline& peaks, uint64_t seed) {
  // The worker's line: the last with a verdict (rocprofv3 may print after the worker ends).
  SandboxResult worker = run;
  json reply;
  for (size_t end = run.out.size(); end > 0 && !reply.is_object();) {
    const size_t start = run.out.rfind('\n', end - 1);
    const size_t from = start == std::string::npos ? 0 : start + 1;
    json line = json::parse(run.out.substr(from, end - from), nullptr, false);
    if (line.is_object() && line.contains("verdict")) reply = std::move(line), worker.out = run.out.substr(from, end - from) + "\n";
    end = start == std::string::npos ? 0 : start;
  }
  if (run.folder_exceeded) {
    EvalResult r = failed_result(Verdict::rejected, fmt::format("rejected: the candidate's process filled its trace folder "
                                                                "past {} MiB or {} files, and was stopped",
                                                                kMaxCandidateTraceBytes >> 20, kMaxCandidateTraceFiles));
    r.details = {{"rule", "trace_tampered"}, {"phase", "run"}, {"timing_source", "rocprofv3"}};
    return r;
  }
  // Anything but the worker's ok is its verdict, or what ended it. An ok is never scored by the
  // worker's provisional samples, whatever rocprofv3's own exit says.
  if (run.timed_out || run.memory_exceeded || run.signal != 0 || !reply.is_object() || reply.value("verdict", "") != "ok")
    return cuda_result_from_worker(worker, timeout_s, problem, peaks, seed);
  SandboxResult timed = worker;
  std::vector<hip::TraceRecord> reference, candidate;
  const size_t max_records = hip::max_trace_records(reply);
  try {  // the reference's trace is the machine's to write: a fault there is not the candidate's
    reference = hip::read_process_trace(trace_dir / "reference", reply.at("host_pids").at("reference").get<int64_t>(),
                                        max_records);
  } catch (const std::exception& e) {
    return failed_result(Verdict::infra_error, std::string("the HIP measurement's traces: ") + e.what(), run.err.substr(0, 4000));
  }
  // The candidate's host writes its own trace as it exits: one that ends otherwise crashed; one
  // that exits cleanly and leaves no usable trace (its folder is writable from inside it) had its
  // trace tampered with, and is not measured.
  const std::string ended = reply.value("hosts_ended", json::object()).value("candidate", std::string("?"));
  if (ended != "exited with status 0") {
    EvalResult r = failed_result(Verdict::crash, "crash: the candidate's process " + ended + " after its last call",
                                 run.err.substr(0, 4000));
    r.details = {{"timing_source", "rocprofv3"}, {"host_ended", ended}};
    return r;
  }
  try {
    candidate = hip::read_process_trace(trace_dir / "candidate", reply.at("host_pids").at("candidate").get<int64_t>(),
                                        max_records);
  } catch (const std::exception& e) {
    EvalResult r = failed_result(Verdict::rejected, std::string("rejected: no usable trace of the candidate's calls: ") + e.what());
    r.details = {{"rule", "trace_tampered"}, {"phase", "after its calls"}, {"timing_source", "rocprofv3"}};
    return r;
  }
  try {
    hip::TracedRun traced = hip::time_from_traces(std::move(reply), std::move(reference), std::move(candidate), candidate_binary);
    if (traced.violation) {
      EvalResult r = failed_result(Verdict::rejected, "rejected: " + traced.violation->message);
      r.details = {{"rule", traced.violation->rule}, {"phase", traced.phase}, {"timing_source", "rocprofv3"}};
      return r;
    }
    timed.out = traced.result.dump() + "\n";
  } catch (const std::exception& e) {
    return failed_result(Verdict::infra_error, std::string("the HIP measurement's traces: ") + e.what(),
                         run.err.substr(0, 4000));
  }
  EvalResult r = cuda_result_from_worker(timed, timeout_s, problem, peaks, seed);
  r.details["timing_source"] = "rocprofv3";
  if (run.exit_code != 0) r.details["rocprofv3_exit"] = run.exit_code;  // after the worker's result
  return r;
}

json HipEvaluator::describe() const {
  return {{"evaluator", "hip"},
          {"hipcc_version", compiler_->version()},
          {"compile_command", compiler_->command("kernel.hip", "kernel.so")},
          {"arch", settings_.arch},
          {"gpus", settings_.gpus},
          {"rocprofv3", rocprofv3_},
          {"cache_dir", compiler_->object_dir().string()},
          {"worker", worker_.string()},
          {"flush_mb", settings_.flush_mb},
          {"timeout_s", settings_.timeout_s},
          {"memory_mb", settings_.memory_mb}};
}

}  // namespace kmcts

KMCTS_REGISTER(kmcts::EvaluatorRegistry, "hip",
               [](const kmcts::Problem& problem, const kmcts::Config& config) -> std::unique_ptr<kmcts::Evaluator> {
                 return std::make_unique<kmcts::HipEvaluator>(problem, kmcts::HipEvaluatorSettings::from_config(config));
               })
