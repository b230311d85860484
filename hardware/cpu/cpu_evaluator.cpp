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

// ---- Options (all read in CpuEvaluatorSettings::from_config) ----
KMCTS_OPTION("evaluator.timeout_s", Double, 60.0, 0.1, 86400.0,
             "Wall-clock limit of one worker run (correctness + timing), seconds; the worker is killed after it")
KMCTS_OPTION("evaluator.memory_mb", Int, 4096, 64.0, 4194304.0,
             "Address-space limit (RLIMIT_AS) of the worker and of the compiler, MiB")
KMCTS_OPTION("evaluator.compile_timeout_s", Double, 120.0, 1.0, 3600.0, "Wall-clock limit of one compile, seconds")
KMCTS_OPTION("evaluator.correctness_trials", Int, 5, 1.0, 1000.0,
             "Correctness trials, each on fresh random inputs, cycling through each input's distributions")
KMCTS_OPTION("evaluator.rse_target", Double, 0.005, 1e-5, 1.0,
             "Stop timing when the relative standard error of both medians is at most this")
KMCTS_OPTION("evaluator.min_samples", Int, 20, 5.0, 1e6, "Fewest timed samples per kernel before stopping")
KMCTS_OPTION("evaluator.max_samples", Int, 2000, 5.0, 1e7, "Most timed samples per kernel")
KMCTS_OPTION("evaluator.min_time_ms", Double, 50.0, 0.0, 1e6,
             "Fewest milliseconds of timed kernel time per kernel before stopping")
KMCTS_OPTION("evaluator.max_time_ms", Double, 2000.0, 1.0, 1e7,
             "Wall-clock budget of the timing loop (flushes included), milliseconds")
KMCTS_OPTION("evaluator.warmup_calls", Int, 3, 0.0, 1e6, "Untimed calls per kernel before timing (at least)")
KMCTS_OPTION("evaluator.warmup_ms", Double, 20.0, 0.0, 1e6, "Untimed warm-up per kernel, milliseconds (at least)")
// 16 MiB. The worker first evicts the kernels' own inputs and outputs line by line (clflush /
// dc civac, every level, whatever the L3 size; for sets up to 64 MiB). This buffer only has
// to displace the rest - kernel scratch, the other kernel's lines, TLB entries - from the
// private L1/L2 (<= 4 MiB per core on current parts) and much of a typical 16-32 MiB L3
// slice, at ~2-3 ms per sample. A buffer big enough for huge server L3s (260 MiB on the Xeon
// this was written on) would cost ~50+ ms per sample and starve small kernels of samples.
// describe() reports the detected L3 size. 0 = no buffer (the line eviction still runs).
KMCTS_OPTION("evaluator.flush_mb", Int, 16, 0.0, 65536.0,
             "Cache-flush buffer written before every timed sample, MiB, after the kernels' own data is evicted (0 = none)")
KMCTS_OPTION("evaluator.input_sets", Int, 2, 2.0, 64.0, "Input sets rotated during timing")
KMCTS_OPTION("evaluator.compiler", String, "c++", std::nullopt, std::nullopt, "Host C++ compiler for cpu kernels")
KMCTS_OPTION("evaluator.cache_dir", String, "", std::nullopt, std::nullopt,
             "Compile cache folder; empty = $XDG_CACHE_HOME/kmcts or ~/.cache/kmcts")
KMCTS_OPTION("evaluator.cpu_worker", String, "", std::nullopt, std::nullopt,
             "Path of kmcts-cpu-worker; empty = next to the running executable")
KMCTS_OPTION("evaluator.input_seed", Int, 0, 0.0, 9007199254740992.0, "Seed of the random inputs (2^53 max)")

namespace kmcts {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path find_worker(const std::string& configured) {
  if (!configured.empty()) {
    if (!fs::exists(configured))
      throw InputError(fmt::format("evaluator.cpu_worker: '{}' does not exist", configured));
    return fs::absolute(configured);
  }
  if (auto found = find_companion("kmcts-cpu-worker")) return *found;
  throw InputError(fmt::format("the cpu worker '{}' does not exist (build target kmcts-cpu-worker, or set evaluator.cpu_worker)",
                               (executable_dir() / "kmcts-cpu-worker").string()));
}

json tensor_json(const TensorSpec& t, bool input) {
  json j = {{"name", t.name}, {"dtype", t.dtype}, {"shape", t.shape}};
  if (input) j["distributions"] = t.distributions;
  return j;
}

/// A fresh private folder for one worker run (job file, kernel copies, the worker's cwd).
fs::path make_run_dir() {
  std::string pattern = (fs::temp_directory_path() / "kmcts-cpu-XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw std::runtime_error("cannot create a temporary folder under " + fs::temp_directory_path().string());
  return pattern;
}

std::string format_ns(double ns) {
  if (ns >= 1e6) return fmt::format("{:.3g} ms", ns * 1e-6);
  if (ns >= 1e3) return fmt::format("{:.3g} us", ns * 1e-3);
  return fmt::format("{:.3g} ns", ns);
}

EvalResult failure(Verdict verdict, std::string message, std::string log = {}) {
  EvalResult r;
  r.verdict = verdict;
  r.message = std::move(message);
  r.log = std::move(log);
  return r;
}

}  // namespace

CpuEvaluatorSettings CpuEvaluatorSettings::from_config(const Config& c) {
  CpuEvaluatorSettings s;
  s.timeout_s = c.get_double("evaluator.timeout_s");
  s.memory_mb = c.get_int("evaluator.memory_mb");
  s.compile_timeout_s = c.get_double("evaluator.compile_timeout_s");
  s.correctness_trials = static_cast<int>(c.get_int("evaluator.correctness_trials"));
  s.rse_target = c.get_double("evaluator.rse_target");
  s.min_samples = static_cast<int>(c.get_int("evaluator.min_samples"));
  s.max_samples = static_cast<int>(c.get_int("evaluator.max_samples"));
  s.min_time_ms = c.get_double("evaluator.min_time_ms");
  s.max_time_ms = c.get_double("evaluator.max_time_ms");
  s.warmup_calls = static_cast<int>(c.get_int("evaluator.warmup_calls"));
  s.warmup_ms = c.get_double("evaluator.warmup_ms");
  s.flush_mb = c.get_int("evaluator.flush_mb");
  s.input_sets = static_cast<int>(c.get_int("evaluator.input_sets"));
  s.compiler = c.get_string("evaluator.compiler");
  s.cache_dir = c.get_string("evaluator.cache_dir");
  s.cpu_worker = c.get_string("evaluator.cpu_worker");
  s.input_seed = c.get_int("evaluator.input_seed");
  if (s.max_samples < s.min_samples)
    throw InputError(fmt::format("evaluator.max_samples ({}) must be >= evaluator.min_samples ({})", s.max_samples,
                                 s.min_samples));
  if (s.compiler.empty()) throw InputError("evaluator.compiler must not be empty");
  return s;
}

CpuEvaluator::CpuEvaluator(Problem problem, CpuEvaluatorSettings settings)
    : problem_(std::move(problem)),
      settings_(std::move(settings)),
      compiler_(CpuCompilerSettings{settings_.compiler, settings_.cache_dir, settings_.compile_timeout_s,
                                    settings_.memory_mb, problem_.compile_flags}),
      worker_(find_worker(settings_.cpu_worker)) {
  if (problem_.kind != "cpu")
    throw InputError(fmt::format("problem '{}' is of kind '{}'; the cpu evaluator runs only kind 'cpu'", problem_.name,
                                 problem_.kind));
}

BuildResult CpuEvaluator::build(const std::string& source) { return compiler_.compile(source); }

const BuildResult& CpuEvaluator::reference() {
  std::lock_guard lock(reference_mutex_);
  if (!reference_) reference_ = compiler_.compile(problem_.reference_source);
  return *reference_;
}

// The job file (JSON), written per run:
//   {"reference": "/tmp/kmcts-cpu-XXXX/reference.so", "candidate": ".../candidate.so",
//    "inputs":  [{"name", "dtype": "f32"|"f64", "shape": [...], "distributions": [...]}],
//    "outputs": [{"name", "dtype", "shape"}],
//    "atol", "rtol", "correctness_trials", "input_seed",
//    "timing": {"rse_target", "min_samples", "max_samples", "min_time_ms", "max_time_ms",
//               "warmup_calls", "warmup_ms", "flush_mb", "input_sets"}}
json CpuEvaluator::job_json(const std::string& reference_so, const std::string& candidate_so) const {
  json inputs = json::array(), outputs = json::array();
  for (const auto& t : problem_.inputs) inputs.push_back(tensor_json(t, true));
  for (const auto& t : problem_.outputs) outputs.push_back(tensor_json(t, false));
  const auto& s = settings_;
  return {{"reference", reference_so},
          {"candidate", candidate_so},
          {"inputs", inputs},
          {"outputs", outputs},
          {"atol", problem_.atol},
          {"rtol", problem_.rtol},
          {"correctness_trials", s.correctness_trials},
          {"input_seed", static_cast<uint64_t>(s.input_seed)},
          {"timing",
           {{"rse_target", s.rse_target}, {"min_samples", s.min_samples}, {"max_samples", s.max_samples},
            {"min_time_ms", s.min_time_ms}, {"max_time_ms", s.max_time_ms}, {"warmup_calls", s.warmup_calls},
            {"warmup_ms", s.warmup_ms}, {"flush_mb", s.flush_mb}, {"input_sets", s.input_sets}}}};
}

EvalResult CpuEvaluator::measure(const BuildResult& build) {
  if (!build.ok) return compile_error_result(build);
  try {
    const BuildResult& ref = reference();
    if (!ref.ok)
      return failure(Verdict::infra_error, "the reference kernel does not compile: " + first_line(ref.log), ref.log);
    return run_worker(build, ref);
  } catch (const std::exception& e) {
    return failure(Verdict::infra_error, std::string("cpu evaluator: ") + e.what());
  }
}

EvalResult CpuEvaluator::run_worker(const BuildResult& candidate, const BuildResult& ref) {
  if (!fs::exists(worker_))
    return failure(Verdict::infra_error, fmt::format("the cpu worker '{}' does not exist", worker_.string()));
  const fs::path dir = make_run_dir();
  struct Cleanup {
    fs::path dir;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } cleanup{dir};
  // Private copies: distinct files, so dlopen gives distinct handles even when the candidate
  // is byte-identical to the reference, and a concurrent cache rewrite cannot touch them.
  fs::copy_file(ref.artifact, dir / "reference.so");
  fs::copy_file(candidate.artifact, dir / "candidate.so");
  {
    std::ofstream job(dir / "job.json");
    job << job_json((dir / "reference.so").string(), (dir / "candidate.so").string()).dump(1);
    if (!job) throw std::runtime_error("cannot write " + (dir / "job.json").string());
  }
  SandboxLimits limits;
  limits.timeout_s = settings_.timeout_s;
  limits.memory_mb = settings_.memory_mb;
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer reserves terabytes of shadow address space, so the (equally
  // sanitized) worker could not even start under RLIMIT_AS.
  limits.memory_mb = 0;
#endif
  // Room for the result's raw samples (about 20 bytes each) whatever max_samples is, while
  // a kernel that prints in a loop still cannot flood the parent's memory or the run store.
  limits.max_output_bytes = std::max<size_t>(1u << 20, static_cast<size_t>(settings_.max_samples) * 64 + (64u << 10));
  // A backstop only (the wall clock fires first): even a kernel using every core for the
  // whole timeout stays under it, yet an orphaned worker cannot spin forever.
  limits.cpu_seconds = settings_.timeout_s * std::max(1u, std::thread::hardware_concurrency()) + 5;
  SandboxResult run = run_sandboxed({worker_.string(), (dir / "job.json").string()}, limits, dir);
  if (!run.started) return failure(Verdict::infra_error, "cannot run the cpu worker: " + run.error);
  EvalResult result = result_from_worker(run, settings_.timeout_s);
  result.run_seconds = run.wall_seconds;
  return result;
}

EvalResult result_from_worker(const SandboxResult& run, double timeout_s) {
  const std::string& log = run.err;
  if (run.timed_out)
    return failure(Verdict::timeout, fmt::format("timeout: no result within {:g} s", timeout_s), log);
  if (run.signal == SIGXCPU)
    return failure(Verdict::timeout, "timeout: CPU time limit exceeded (SIGXCPU)", log);
  if (run.signal != 0) {
    std::string name = signal_name(run.signal);
    EvalResult r = failure(Verdict::crash,
                           "crash: " + name + (run.signal == SIGKILL ? " (out of memory?)" : ""), log);
    r.details = {{"signal", name}, {"signal_number", run.signal}};
    return r;
  }
  // The worker prints one JSON line last; take the last non-empty line.
  std::string text = run.out;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  json reply = json::parse(text.substr(text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1), nullptr,
                           /*allow_exceptions=*/false);
  if (reply.is_discarded() || !reply.is_object() || !reply.contains("verdict")) {
    EvalResult r = failure(Verdict::crash,
                           run.exit_code == 0 ? "crash: the worker exited without a result (did the kernel call exit()?)"
                                              : fmt::format("crash: the worker exited with code {}", run.exit_code),
                           log);
    r.details = {{"exit_code", run.exit_code}};
    return r;
  }
  EvalResult r;
  try {
    r.verdict = verdict_from_string(reply.at("verdict").get<std::string>());
  } catch (const std::exception& e) {
    return failure(Verdict::infra_error, std::string("cpu worker: ") + e.what(), log);
  }
  r.log = log;
  r.details = reply.value("details", json::object());
  if (r.verdict != Verdict::ok) {
    std::string message = reply.value("message", std::string());
    r.message = (r.verdict == Verdict::wrong_answer ? "wrong answer: " : "") + message;
    return r;
  }
  r.reference = TimingStats::from_samples(reply.value("reference_samples_ns", std::vector<double>{}));
  r.candidate = TimingStats::from_samples(reply.value("candidate_samples_ns", std::vector<double>{}));
  if (r.reference.samples() == 0 || r.candidate.samples() == 0 || r.candidate.median_ns <= 0)
    return failure(Verdict::infra_error, "cpu worker: ok without timing samples", log);
  r.speedup = r.reference.median_ns / r.candidate.median_ns;
  r.details["counters"] = reply.value("counters", json::object());
  r.message = fmt::format("ok: speedup {:.3f}x (reference {}, candidate {}, {} samples)", r.speedup,
                          format_ns(r.reference.median_ns), format_ns(r.candidate.median_ns), r.candidate.samples());
  return r;
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
          {"flush_mb", settings_.flush_mb},
          {"timeout_s", settings_.timeout_s},
          {"memory_mb", settings_.memory_mb}};
}

}  // namespace kmcts

KMCTS_REGISTER(kmcts::EvaluatorRegistry, "cpu",
               [](const kmcts::Problem& problem, const kmcts::Config& config) -> std::unique_ptr<kmcts::Evaluator> {
                 return std::make_unique<kmcts::CpuEvaluator>(problem, kmcts::CpuEvaluatorSettings::from_config(config));
               })
