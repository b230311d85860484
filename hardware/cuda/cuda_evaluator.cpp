#include "hardware/cuda/cuda_evaluator.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/hash.hpp"
#include "core/text.hpp"
#include "hardware/companion.hpp"
#include "hardware/cuda/devices.hpp"
#include "hardware/cuda/hw_counters.hpp"
#include "hardware/cuda/ptxas.hpp"
#include "hardware/cuda/timing_math.hpp"
#include "hardware/kernel_profile.hpp"
#include "hardware/worker_result.hpp"

#ifndef KMCTS_CPU_ABI_DIR
#error "KMCTS_CPU_ABI_DIR must name hardware/cpu/abi (set by hardware/CMakeLists.txt)"
#endif
#ifndef KMCTS_CUDA_ABI_DIR
#error "KMCTS_CUDA_ABI_DIR must name hardware/cuda/abi (set by hardware/CMakeLists.txt)"
#endif

// ---- Options of the cuda evaluator (the shared ones: hardware/measure_settings.cpp) ----
KMCTS_OPTION("evaluator.cuda.nvcc", String, "", std::nullopt, std::nullopt,
             "nvcc to build CUDA kernels with; empty = $CUDA_HOME/bin/nvcc, /usr/local/cuda/bin/nvcc, or nvcc in PATH")
KMCTS_OPTION("evaluator.cuda.arch", String, "", std::nullopt, std::nullopt,
             "Target architecture, e.g. sm_90 (nvcc -arch); empty = the first GPU's, found by kmcts-cuda-probe")
KMCTS_OPTION("evaluator.cuda.gpus", String, "", std::nullopt, std::nullopt,
             "CUDA device indices to measure on, e.g. 0,1 (one measurement per GPU at a time); empty = every GPU "
             "found. `kmcts run --gpus` sets it")
KMCTS_OPTION("evaluator.cuda.worker", String, "", std::nullopt, std::nullopt,
             "Path of kmcts-cuda-worker; empty = next to the running executable")
KMCTS_OPTION("evaluator.cuda.flush_mb", Int, 0, 0.0, 65536.0,
             "L2 flush written before every timed sample, MiB; 0 = max(2 x the GPU's L2, 128 MiB)")
KMCTS_OPTION("evaluator.cuda.min_clock_ratio", Double, 0.9, 0.0, 1.0,
             "Timed samples taken while the SM clock is under this fraction of the highest clock seen in the run "
             "are dropped and counted (0 = keep all)")
KMCTS_OPTION("evaluator.cuda.event_samples", Int, 10, 0.0, 10000.0,
             "CUDA-event samples per kernel, taken with tracing off after the CUPTI timing, as a cross-check")
KMCTS_OPTION("evaluator.cuda.protocol", String, "kmcts", std::nullopt, std::nullopt,
             "kmcts (CUPTI union over all streams, L2 flush, interleaved blocks, stopping rule, median) or "
             "kernelbench (KernelBench's loop: CUDA events around single calls, 256 MB fill, 100 trials, mean), "
             "kept to compare protocols (bench/measure); it misses side-stream work, so never search with it")
KMCTS_OPTION("evaluator.cuda.profile", Bool, false, std::nullopt, std::nullopt,
             "After a successful measurement, profile one candidate call under Nsight Compute (a separate worker "
             "run that never feeds the timing) and keep a short list of hardware counters for the agents: DRAM and "
             "SM throughput, achieved occupancy, L2 hit rate, warp stall reasons")
KMCTS_CHOICE_OPTION("evaluator.cuda.profile_when", "best", ({"best", "all"}),
                    "Which correct measurements evaluator.cuda.profile profiles: best (one that beats every measurement "
                    "the run made before: the seed, then each new best, the kernels the Planner expands most) or all; "
                    "profiles are cached by source, GPU and metric list under the cache folder's ncu/")
KMCTS_OPTION("evaluator.cuda.ncu", String, "", std::nullopt, std::nullopt,
             "Nsight Compute's ncu for evaluator.cuda.profile and evaluator.kernelbench.profile; empty = "
             "$CUDA_HOME/bin/ncu, /usr/local/cuda/bin/ncu, or ncu in PATH")
KMCTS_OPTION("evaluator.cuda.peak_gbps", Double, 0.0, 0.0, 1e6,
             "DRAM bandwidth peak for the roofline audit, GB/s; 0 = the worker's estimate from the device")
KMCTS_OPTION("evaluator.cuda.peak_tflops", Double, 0.0, 0.0, 1e6,
             "Arithmetic peak for the roofline audit, TFLOP/s; 0 = the fp32 estimate from the device (a kernel "
             "beating it used lower precision or skipped work, and is flagged)")

namespace kmcts {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// What Nsight Compute and compute-sanitizer need beyond a measurement's confinement, found on the
// H100 (bench/measure/ncu_confinement_check.sh, bench/results/llm-cuda-session.md): they write
// temporary reports and lock files under the private /tmp, where a measurement may write nothing
// (RLIMIT_FSIZE 0 killed both with SIGXFSZ); and under a uid of its own the profiler could not
// start its target ("Launching the target application failed", compute-sanitizer's "Error
// launching target app"): its working folder, under /tmp, was not in the child's view. It runs
// under kmcts's uid without capabilities, as the KernelBench harness does; so kept, the user's
// home is hidden from it (root's files are its uid's), and the kernel hosts' Landlock reads only
// system folders anyway. `tool` is the profiler.
void profiler_room(SandboxLimits& limits, const fs::path& folder, const fs::path& worker, const std::string& tool) {
  limits.max_file_bytes = 1ull << 30;
  limits.tmpfs_options = "size=1g,mode=1777";
  limits.keep_uid = true;
  // The worker's folder, by its path: the profiler starts its target there by name (a folder
  // under the private /tmp is gone from the view, the measurement's worker only keeps it open).
  std::vector<fs::path> needed = {folder, worker.parent_path().parent_path()};  // and the bundle
  std::error_code ec;
  if (const std::string program = find_program(tool); !program.empty())
    needed.push_back(fs::canonical(program, ec).parent_path().parent_path());
  hide_home(limits, needed);
}

// The roofline's peaks: the configured ones, else the worker's estimates from the device.
cuda::Roofline peaks_for(const cuda::Roofline& configured, const json& details) {
  cuda::Roofline used = configured;
  const json device = details.value("device", json::object());
  if (used.bytes_per_s <= 0) used.bytes_per_s = device.value("peak_bytes_per_s_estimate", 0.0);
  if (used.flops_per_s <= 0) used.flops_per_s = device.value("peak_fp32_flops_estimate", 0.0);
  return used;
}

// The worker cannot use less: the GPU clock ramps up from idle (REFERENCE.md).
constexpr double kMinWarmupMs = 50;
// Kernels faster than this need twice the timed time before stopping (REFERENCE.md).
constexpr double kShortKernelNs = 10000;

}  // namespace

std::vector<int> parse_gpu_list(const std::string& text, const std::string& option) {
  std::vector<int> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    size_t used = 0;
    int value = -1;
    try {
      value = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size() || value < 0)
      throw InputError(fmt::format("{}: '{}' is not a list of GPU indices like 0,1", option, text));
    if (std::find(out.begin(), out.end(), value) != out.end())
      throw InputError(fmt::format("{}: GPU {} is listed twice", option, value));
    out.push_back(value);
  }
  return out;
}

CudaEvaluatorSettings CudaEvaluatorSettings::from_config(const Config& c) {
  CudaEvaluatorSettings s;
  static_cast<MeasureSettings&>(s) = MeasureSettings::from_config(c);
  s.timing.warmup_ms = std::max(s.timing.warmup_ms, kMinWarmupMs);
  s.nvcc = c.get_string("evaluator.cuda.nvcc");
  s.arch = c.get_string("evaluator.cuda.arch");
  if (!s.arch.empty() && (s.arch.rfind("sm_", 0) != 0 || s.arch.size() < 5))
    throw InputError(fmt::format("evaluator.cuda.arch: '{}' is not an architecture like sm_90", s.arch));
  s.gpus = parse_gpu_list(c.get_string("evaluator.cuda.gpus"), "evaluator.cuda.gpus");
  s.worker = c.get_string("evaluator.cuda.worker");
  s.flush_mb = c.get_int("evaluator.cuda.flush_mb");
  s.min_clock_ratio = c.get_double("evaluator.cuda.min_clock_ratio");
  s.event_samples = static_cast<int>(c.get_int("evaluator.cuda.event_samples"));
  s.protocol = c.get_string("evaluator.cuda.protocol");
  s.profile = c.get_bool("evaluator.cuda.profile");
  s.profile_when = c.get_string("evaluator.cuda.profile_when");
  s.ncu = c.get_string("evaluator.cuda.ncu");
  s.diagnosis = cuda::FaultDiagnosis::from_config(c);
  if (s.protocol != "kmcts" && s.protocol != "kernelbench")
    throw InputError(fmt::format("evaluator.cuda.protocol: '{}' is not kmcts or kernelbench", s.protocol));
  s.peaks.bytes_per_s = c.get_double("evaluator.cuda.peak_gbps") * 1e9;
  s.peaks.flops_per_s = c.get_double("evaluator.cuda.peak_tflops") * 1e12;
  return s;
}

CompilerFlavor cuda_compiler_flavor(const std::string& arch) {
  const fs::path cuda_abi = data_dir("abi/cuda", KMCTS_CUDA_ABI_DIR), cpu_abi = data_dir("abi/cpu", KMCTS_CPU_ABI_DIR);
  return {"cuda",
          "kernel.cu",
          {"-O3", "-std=c++17", "-arch=" + arch, "-shared", "-Xcompiler", "-fPIC", "-cudart", "shared", "-Xptxas", "-v",
           "-lineinfo", fmt::format("-I{}", cuda_abi.string()), fmt::format("-I{}", cpu_abi.string())},
          {cuda_abi / "kmcts_cuda.h", cpu_abi / "kmcts_cpu.h"},
          [](const std::string& log) { return cuda::parse_ptxas_resources(log); }};
}

CudaEvaluator::CudaEvaluator(Problem problem, CudaEvaluatorSettings settings)
    : problem_(std::move(problem)), settings_(std::move(settings)) {
  if (problem_.kind != "cuda")
    throw InputError(fmt::format("problem '{}' is of kind '{}'; the cuda evaluator runs only kind 'cuda'", problem_.name,
                                 problem_.kind));
  reclaim_worker_folders("kmcts-cuda");  // what a process killed mid-measurement left behind
  worker_ = find_worker_executable(settings_.worker, "kmcts-cuda-worker", "evaluator.cuda.worker",
                                   "this kmcts was built without the CUDA toolkit and CUPTI");
  if (settings_.arch.empty() || settings_.gpus.empty()) {
    probe_ = cuda::probe_devices();
    const json devices = probe_.value("devices", json::array());
    if (devices.empty())
      throw InputError(fmt::format("no CUDA GPU found ({}); set evaluator.cuda.arch and evaluator.cuda.gpus to build "
                                   "and measure anyway",
                                   probe_.value("error", std::string("the probe lists no device"))));
    if (settings_.gpus.empty())
      for (const auto& d : devices) settings_.gpus.push_back(d.value("index", 0));
    if (settings_.arch.empty()) {
      const int first = settings_.gpus.front();
      for (const auto& d : devices)
        if (d.value("index", -1) == first) settings_.arch = d.value("arch", std::string());
      if (settings_.arch.empty())
        throw InputError(fmt::format("evaluator.cuda.gpus: GPU {} is not among the {} found", first, devices.size()));
    }
  }
  compiler_.emplace(CompilerSettings{cuda::find_cuda_tool(settings_.nvcc, "nvcc"), settings_.cache_dir, settings_.compile_timeout_s,
                                     settings_.memory_mb, problem_.compile_flags},
                    cuda_compiler_flavor(settings_.arch), "evaluator.cuda.nvcc");
  pool_.emplace(settings_.gpus);
  if (settings_.profile) deep_ = std::make_unique<cuda::DeepProfiles>(settings_.profile_when, settings_.cache_dir);
}

BuildResult CudaEvaluator::build(const std::string& source) { return compiler_->compile(source); }

const BuildResult& CudaEvaluator::reference() {
  return reference_.get(*compiler_, problem_.reference_source, problem_.reference_flags);
}

json CudaEvaluator::job_json(const std::string& reference_so, const std::string& candidate_so, int device,
                             const std::string& protocol) const {
  json job = worker_job_json(problem_, settings_, reference_so, candidate_so);
  job["cuda"] = {{"device", device},
                 {"flush_bytes", static_cast<uint64_t>(settings_.flush_mb) << 20},
                 {"min_clock_ratio", settings_.min_clock_ratio},
                 {"event_samples", settings_.event_samples},
                 {"short_kernel_ns", kShortKernelNs},
                 {"protocol", protocol.empty() ? settings_.protocol : protocol}};
  return job;
}

EvalResult CudaEvaluator::measure(const BuildResult& build) {
  if (!build.ok) return compile_error_result(build);
  try {
    const BuildResult& ref = reference();
    if (!ref.ok)
      return failed_result(Verdict::infra_error, "the reference kernel does not compile: " + first_line(ref.log), ref.log);
    const WorkerFolder folder("kmcts-cuda", ref.artifact, build.artifact);
    cuda::GpuPool::Lease gpu = pool_->acquire();
    const std::string job = folder.write_job("job.json", job_json(folder.reference(), folder.candidate(), gpu.device()));
    SandboxLimits limits = WorkerFolder::limits(settings_.timeout_s, settings_.timing.max_samples);
    limits.max_rss_mb = settings_.memory_mb;
    SandboxResult run = run_sandboxed({worker_.string(), job}, limits, folder.dir());
    if (!run.started) return failed_result(Verdict::infra_error, "cannot run the CUDA worker: " + run.error);
    EvalResult result = cuda_result_from_worker(run, settings_.timeout_s, problem_, settings_.peaks,
                                                static_cast<uint64_t>(settings_.input_seed));
    result.details["gpu"] = gpu.device();
    result.details["confinement"] = with_host_files(run.confinement);
    result.run_seconds = run.wall_seconds;
    if (deep_ && result.ok() && deep_->wanted(result.speedup)) profile(folder, gpu.device(), build, result);
    if (settings_.diagnosis.wanted(result)) try {
        diagnose(folder, gpu.device(), result);
      } catch (const std::exception& e) {  // feedback only: the crash stays the verdict
        result.details["fault_error"] = e.what();
      }
    return result;
  } catch (const std::exception& e) {
    return failed_result(Verdict::infra_error, std::string("cuda evaluator: ") + e.what());
  }
}

void CudaEvaluator::profile(const WorkerFolder& folder, int device, const BuildResult& build, EvalResult& result) const {
  const std::string key = cuda::DeepProfiles::key(build.source_hash, sha256_hex(problem_.raw.dump()),
                                                  result.details.value("device", json::object()).value("name", ""));
  if (deep_->from_cache(result, key)) return;
  const std::string job = folder.write_job("profile.json", job_json(folder.reference(), folder.candidate(), device, "profile"));
  const std::string metrics = cuda::counter_metric_list();
  // A profiler replays each kernel several times.
  SandboxLimits limits = WorkerFolder::limits(settings_.timeout_s * 2, settings_.timing.max_samples);
  limits.max_rss_mb = settings_.memory_mb;
  const std::string ncu = cuda::find_cuda_tool(settings_.ncu, "ncu");
  profiler_room(limits, folder.dir(), worker_, ncu);
  // Only the candidate's call is profiled: its host opens the profiler's range around it.
  SandboxResult run = run_sandboxed({ncu, "--csv", "--profile-from-start", "off", "--metrics", metrics,
                                     "--target-processes", "all", worker_.string(), job},
                                    limits, folder.dir());
  deep_->record(result, key, run, problem_, peaks_for(settings_.peaks, result.details));
}

void CudaEvaluator::diagnose(const WorkerFolder& folder, int device, EvalResult& result) const {
  // The worker's one-call job (as ncu's): the candidate's call on the timing inputs, its kernel
  // host followed by the sanitizer, confined as the measurement was.
  const std::string job = folder.write_job("diagnose.json", job_json(folder.reference(), folder.candidate(), device, "profile"));
  // memcheck slows kernels by 10-100x; one call is run
  SandboxLimits limits = WorkerFolder::limits(settings_.timeout_s * 10, settings_.timing.max_samples);
  limits.max_rss_mb = settings_.memory_mb;
  std::vector<std::string> argv = settings_.diagnosis.command();
  profiler_room(limits, folder.dir(), worker_, argv.front());
  argv.insert(argv.end(), {worker_.string(), job});
  const SandboxResult run = run_sandboxed(argv, limits, folder.dir());
  cuda::add_fault(result, run.out + run.err, run.started, run.error, run.wall_seconds);
  result.details["diagnosis_confinement"] = with_host_files(run.confinement);
}

EvalResult cuda_result_from_worker(const SandboxResult& run, double timeout_s, const Problem& problem,
                                   const cuda::Roofline& peaks, uint64_t seed) {
  EvalResult r = result_from_worker(run, timeout_s, "CUDA worker");
  const std::string text = last_line(run.out);
  const json reply = json::parse(text, nullptr, false);
  if (!reply.is_object()) return r;
  for (const char* key : {"device", "events", "candidate_kernels"})
    if (reply.contains(key)) r.details[key] = reply.at(key);
  if (!r.ok()) return r;
  if (reply.value("counters", json::object()).value("protocol", std::string()) == "kernelbench") {
    // KernelBench scores the mean of its 100 trials.
    r.speedup = r.reference.mean_ns / r.candidate.mean_ns;
    r.message = fmt::format("ok (kernelbench protocol): speedup {:.3f}x by means (reference {}, candidate {})", r.speedup,
                            format_ns(r.reference.mean_ns), format_ns(r.candidate.mean_ns));
    return r;
  }

  const cuda::RatioInterval ci = cuda::bootstrap_speedup(r.reference.samples_ns, r.candidate.samples_ns, seed);
  const cuda::SpeedupVerdict call = cuda::judge_speedup(ci, r.reference.rse_median, r.candidate.rse_median);
  r.details["speedup_ci"] = {{"low", ci.low}, {"high", ci.high}, {"level", 0.95}};
  r.details["speedup_call"] = call.call;
  r.details["speedup_margin"] = call.margin;

  const json& events = r.details.value("events", json::object());
  if (events.contains("candidate_median_ns") && r.candidate.median_ns > 0)
    r.details["events"]["candidate_events_over_cupti"] = events.at("candidate_median_ns").get<double>() / r.candidate.median_ns;

  const cuda::Roofline used = peaks_for(peaks, r.details);
  const double floor_ns = cuda::roofline_floor_ns(problem.flops, problem.bytes, used);
  if (floor_ns > 0) {
    r.details["roofline"] = {{"floor_ns", floor_ns},
                             {"fraction", floor_ns / r.candidate.median_ns},
                             {"peak_bytes_per_s", used.bytes_per_s},
                             {"peak_flops_per_s", used.flops_per_s}};
    if (r.candidate.median_ns < floor_ns) {
      r.details["audit"] = fmt::format("faster than the roofline allows: {} against a floor of {} ({} FLOP, {} bytes)",
                                       format_ns(r.candidate.median_ns), format_ns(floor_ns), problem.flops,
                                       problem.bytes);
      r.message += " [flagged for audit: faster than the roofline]";
    }
  }
  if (reply.contains("kernel_tables")) try {
      json profile = kernel_profile(reply.at("kernel_tables"), problem, r.reference.median_ns, r.candidate.median_ns, used);
      if (!profile.is_null()) r.details["kernel_profile"] = std::move(profile);
    } catch (const std::exception& e) {  // feedback only: a bad table costs the profile, not the verdict
      r.details["kernel_profile_error"] = e.what();
    }
  r.message += fmt::format(", 95% CI [{:.3f}, {:.3f}], {}", ci.low, ci.high, call.call);
  return r;
}

json CudaEvaluator::describe() const {
  return {{"evaluator", "cuda"},
          {"nvcc_version", compiler_->version()},
          {"compile_command", compiler_->command("kernel.cu", "kernel.so")},
          {"arch", settings_.arch},
          {"gpus", settings_.gpus},
          {"probe", probe_},
          {"cache_dir", compiler_->object_dir().string()},
          {"worker", worker_.string()},
          {"flush_mb", settings_.flush_mb},
          {"timeout_s", settings_.timeout_s},
          {"memory_mb", settings_.memory_mb}};
}

}  // namespace kmcts

KMCTS_REGISTER(kmcts::EvaluatorRegistry, "cuda",
               [](const kmcts::Problem& problem, const kmcts::Config& config) -> std::unique_ptr<kmcts::Evaluator> {
                 return std::make_unique<kmcts::CudaEvaluator>(problem, kmcts::CudaEvaluatorSettings::from_config(config));
               })
