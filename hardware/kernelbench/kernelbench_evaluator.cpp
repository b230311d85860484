#include "hardware/kernelbench/kernelbench_evaluator.hpp"

#include <unistd.h>

#include <cstdlib>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/hash.hpp"
#include "core/install_paths.hpp"
#include "core/text.hpp"
#include "hardware/compiler.hpp"
#include "hardware/confine.hpp"
#include "hardware/confine_exec.hpp"
#include "hardware/cuda/devices.hpp"
#include "hardware/cuda/hw_counters.hpp"
#include "hardware/kernel_profile.hpp"
#include "hardware/kernelbench/kb_prebuild.hpp"
#include "hardware/sandbox.hpp"
#include "hardware/worker_result.hpp"

KMCTS_OPTION("evaluator.kernelbench.python", String, "python3", std::nullopt, std::nullopt,
             "Python interpreter with torch that runs the KernelBench harness")
KMCTS_OPTION("evaluator.kernelbench.harness", String, "", std::nullopt, std::nullopt,
             "Folder of the harness (faithful.py, hardened.py); empty = the copy installed with kmcts")
KMCTS_CHOICE_OPTION("evaluator.kernelbench.tolerance", "current", ({"current", "paper"}),
             "allclose tolerance generation: current (1e-4) or paper (1e-2, the paper era); recorded in each result")
KMCTS_CHOICE_OPTION("evaluator.kernelbench.baseline", "eager", ({"eager", "compile"}),
             "Speedup against PyTorch eager or torch.compile (both are timed in the same run)")
KMCTS_OPTION("evaluator.kernelbench.trials", Int, 100, 1.0, 100000.0,
             "Faithful mode: timed calls per model (one more is discarded)")
KMCTS_OPTION("evaluator.kernelbench.time_compile", Bool, false, std::nullopt, std::nullopt,
             "Also time torch.compile (inductor) of the reference in every evaluation (seconds more each; always on "
             "with baseline=compile and in `kmcts kernelbench`)")
KMCTS_OPTION("evaluator.kernelbench.device", String, "0", std::nullopt, std::nullopt,
             "GPU index for the harness, or cpu (tests of the protocol logic without a GPU; not KernelBench's timing)")
KMCTS_CHOICE_OPTION("evaluator.kernelbench.mode", "hardened", ({"hardened", "faithful"}),
             "hardened (candidate in its own process, CUPTI timing, medians, static screen, checks of every "
             "timed output) or faithful (KernelBench's own protocol: candidate in the harness, CUDA events, means)")
KMCTS_CHOICE_OPTION("evaluator.kernelbench.screen", "reject", ({"reject", "record"}),
             "Hardened mode: a candidate the static screen flags is rejected (reject) or only recorded (record)")
KMCTS_CHOICE_OPTION("evaluator.kernelbench.library_policy", "report", ({"report", "limit", "all"}),
             "Hardened mode on a GPU, library kernels (ATen, cuBLAS, cuDNN, inductor) in the timed calls: report "
             "(allowed and recorded with the own-kernel share: KernelBench's setting), limit (rejected above "
             "max_library_share of the kernel time) or all (rejected: every op a kernel of its own). Each rejects "
             "a candidate none of whose kernels is its own")
KMCTS_CHOICE_OPTION("evaluator.kernelbench.eager_process", "child", ({"child", "harness"}),
             "Hardened mode: where the eager reference is timed: child (a fresh process of the candidate's kind, "
             "by the same block code, timer and output copy: the sides differ only in their code) or harness (in the "
             "warm trusted process, whose history the candidate's process lacks; one process fewer per evaluation)")
KMCTS_OPTION("evaluator.kernelbench.max_library_share", Double, 0.5, 0.0, 1.0,
             "Hardened mode, library_policy=limit: the largest share of kernel time library kernels may take")
KMCTS_OPTION("evaluator.kernelbench.timer_lib", String, "", std::nullopt, std::nullopt,
             "Hardened mode: the CUPTI timing library (libkmcts_kb_timer.so); empty = the one built or installed with kmcts")
KMCTS_OPTION("evaluator.kernelbench.prebuild", Bool, true, std::nullopt, std::nullopt,
             "Build a candidate's extensions (load_inline) on the CPU pool with no GPU visible, cached by content, "
             "before its evaluation holds the GPU")
KMCTS_OPTION("evaluator.kernelbench.fast_build", Bool, true, std::nullopt, std::nullopt,
             "Faster load_inline builds: C++ sources that open with #include <torch/extension.h> (every binding) "
             "compiled with a precompiled torch/extension.h, made once per compiler, flags and torch install under "
             "the cache (harness/kb_cxx.py as CXX; the real one is $CXX, else c++), and CUDA sources that name "
             "nothing of torch compiled without the torch/types.h load_inline puts before them, and those that name it "
             "split in two: the kernels compiled by nvcc without torch, the host functions by the host compiler with "
             "the precompiled header (harness/kb_nvcc.py and kb_split.py as PYTORCH_NVCC; a source they cannot "
             "divide, or whose parts do not build, is compiled as written)")
KMCTS_OPTION("evaluator.kernelbench.cuda_arch", String, "", std::nullopt, std::nullopt,
             "TORCH_CUDA_ARCH_LIST for prebuilds, e.g. 9.0; empty = the evaluation GPU's (kmcts-cuda-probe)")
KMCTS_OPTION("evaluator.kernelbench.warm", Bool, true, std::nullopt, std::nullopt,
             "Keep harness processes warm (harness/serve.py): torch and the GPU readied before a candidate comes; "
             "hardened reuses its trusted side until it faults (a fresh process per candidate still), faithful "
             "starts the next candidate's process ahead")
KMCTS_OPTION("evaluator.kernelbench.profile", Bool, false, std::nullopt, std::nullopt,
             "After a successful measurement, run one call of the candidate under Nsight Compute (harness/one_call.py, "
             "confined as the harness, never feeding the timing) and keep the curated counters of its kernels with "
             "each one's bottleneck verdict for the agents, as evaluator.cuda.profile does for CUDA problems (ncu: "
             "evaluator.cuda.ncu)")
KMCTS_CHOICE_OPTION("evaluator.kernelbench.profile_when", "best", ({"best", "all"}),
                    "Which correct measurements evaluator.kernelbench.profile profiles: best (the seed, then each new "
                    "best) or all; cached by candidate, problem, GPU and metric list under the cache folder's ncu/")
KMCTS_OPTION("evaluator.kernelbench.timeout_s", Double, 900.0, 1.0, 86400.0,
             "Wall-clock limit of one evaluation, load_inline build included")

namespace kmcts {

namespace fs = std::filesystem;
using nlohmann::json;

KernelBenchSettings KernelBenchSettings::from_config(const Config& c) {
  KernelBenchSettings s;
  s.python = c.get_string("evaluator.kernelbench.python");
  s.harness = c.get_string("evaluator.kernelbench.harness");
  s.tolerance = c.get_string("evaluator.kernelbench.tolerance");
  s.baseline = c.get_string("evaluator.kernelbench.baseline");
  s.trials = static_cast<int>(c.get_int("evaluator.kernelbench.trials"));
  s.timeout_s = c.get_double("evaluator.kernelbench.timeout_s");
  s.device = c.get_string("evaluator.kernelbench.device");
  s.mode = c.get_string("evaluator.kernelbench.mode");
  s.screen = c.get_string("evaluator.kernelbench.screen");
  s.library_policy = c.get_string("evaluator.kernelbench.library_policy");
  s.max_library_share = c.get_double("evaluator.kernelbench.max_library_share");
  s.eager_process = c.get_string("evaluator.kernelbench.eager_process");
  s.timer_lib = c.get_string("evaluator.kernelbench.timer_lib");
  s.prebuild = c.get_bool("evaluator.kernelbench.prebuild");
  s.cuda_arch = c.get_string("evaluator.kernelbench.cuda_arch");
  s.fast_build = c.get_bool("evaluator.kernelbench.fast_build");
  s.warm = c.get_bool("evaluator.kernelbench.warm");
  s.profile = c.get_bool("evaluator.kernelbench.profile");
  s.profile_when = c.get_string("evaluator.kernelbench.profile_when");
  s.ncu = c.get_string("evaluator.cuda.ncu");
  s.diagnosis = cuda::FaultDiagnosis::from_config(c);
  s.time_compile = c.get_bool("evaluator.kernelbench.time_compile") || s.baseline == "compile";
  if (s.device != "cpu" && (s.device.empty() || s.device.find_first_not_of("0123456789") != std::string::npos))
    throw InputError(fmt::format("evaluator.kernelbench.device '{}' is neither a GPU index nor cpu", s.device));
  s.cache_dir = c.get_string("evaluator.cache_dir");
  if (s.python.empty()) throw InputError("evaluator.kernelbench.python must not be empty");
  return s;
}

fs::path kernelbench_timer_library() {
  const fs::path installed = data_dir("kernelbench", KMCTS_KERNELBENCH_DIR) / "libkmcts_kb_timer.so";
  if (fs::exists(installed)) return installed;
  return executable_dir() / "libkmcts_kb_timer.so";  // a build tree: next to kmcts
}

namespace {

// "9.0" for the GPU's "sm_90", as TORCH_CUDA_ARCH_LIST spells it; "" when the probe cannot tell.
std::string probed_arch(const std::string& device) {
  const json probe = cuda::probe_devices();
  for (const json& d : probe.value("devices", json::array())) {
    const std::string arch = d.value("arch", "");
    if (std::to_string(d.value("index", -1)) != device || arch.rfind("sm_", 0) != 0) continue;
    // sm_90 -> 9.0, sm_90a -> 9.0a, sm_100 -> 10.0
    const size_t digits = arch.find_first_not_of("0123456789", 3);
    const std::string number = arch.substr(3, digits == std::string::npos ? std::string::npos : digits - 3);
    if (number.size() < 2) continue;
    return number.substr(0, number.size() - 1) + "." + number.substr(number.size() - 1) +
           (digits == std::string::npos ? "" : arch.substr(digits));
  }
  return "";
}

TimingStats stats_of(const json& runtime, const char* which) {
  std::vector<double> ns;
  for (const json& ms : runtime.at(which).at("times_ms")) ns.push_back(ms.get<double>() * 1e6);
  return TimingStats::from_samples(std::move(ns));
}

}  // namespace

EvalResult result_from_harness(const json& line, const std::string& baseline) {
  EvalResult r;
  const std::string mode = line.value("mode", "faithful");
  r.details = {{"mode", mode}, {"tolerance", line.value("tolerance", json::object())}};
  if (line.contains("screen")) r.details["screen"] = line["screen"];
  if (line.contains("counters")) r.details["counters"] = line["counters"];
  if (line.contains("attribution")) r.details["attribution"] = line["attribution"];
  if (line.contains("candidate_guard")) r.details["candidate_guard"] = line["candidate_guard"];
  // The trusted side's peak GPU memory in this evaluation, on every verdict: whether a problem's
  // size fits a smaller card (an out-of-memory infra_error names the allocation that failed).
  if (line.contains("harness_gpu_memory_gib")) r.details["harness_gpu_memory_gib"] = line["harness_gpu_memory_gib"];
  if (line.contains("notes")) r.details["harness_notes"] = line["notes"];  // what the harness says it could not do
  if (line.contains("device") && line["device"].is_string()) r.details["device"] = line["device"];  // its name
  const std::string error = line.value("error", std::string());
  if (line.contains("infra_error")) {
    r.verdict = Verdict::infra_error;
    r.message = "the KernelBench harness failed: " + line.value("infra_error", std::string());
    r.log = line.value("traceback", std::string());
    return r;
  }
  if (!line.value("compiled", false)) {
    r.verdict = line.value("timeout", false) ? Verdict::timeout : Verdict::compile_error;
    r.message = (line.value("timeout", false) ? "timeout: " : "compile error: ") +
                (error.empty() ? std::string("the candidate did not load") : error);
    r.log = line.value("traceback", std::string());
    return r;
  }
  if (line.contains("rejected")) {
    r.verdict = Verdict::rejected;
    r.message = "rejected: " + line.value("rejected", std::string());
    return r;
  }
  if (line.contains("wrong_answer")) {
    r.verdict = Verdict::wrong_answer;
    r.message = "wrong answer: " + line.value("wrong_answer", std::string());
    return r;
  }
  if (line.contains("error")) {  // present at all is a failure, whatever it says
    r.verdict = line.value("timeout", false) ? Verdict::timeout : Verdict::crash;
    r.message = (line.value("timeout", false) ? "timeout: " : "crash: ") + error;
    r.log = line.value("traceback", std::string());
    return r;
  }
  const json trials = line.value("trials", json::array());
  r.details["trials"] = trials;
  if (!line.value("correct", false)) {
    r.verdict = Verdict::wrong_answer;
    const json& tol = r.details["tolerance"];
    for (size_t k = 0; k < trials.size(); ++k) {
      if (trials[k].value("ok", false)) continue;
      r.message = trials[k].contains("error")
                      ? fmt::format("wrong answer: trial {}: {}", k, trials[k].value("error", ""))
                      : fmt::format("wrong answer: trial {}: max |diff| {:.3g} beyond allclose(atol={}, rtol={})", k,
                                    trials[k].value("max_abs_diff", 0.0), tol.value("atol", 0.0), tol.value("rtol", 0.0));
      break;
    }
    if (r.message.empty()) r.message = "wrong answer: fewer correctness trials than asked";
    return r;
  }
  const json& runtime = line.at("runtime_ms");
  if (!runtime.contains(baseline))
    throw std::runtime_error(fmt::format("the harness timed no '{}' baseline", baseline));
  r.candidate = stats_of(runtime, "candidate");
  r.reference = stats_of(runtime, baseline.c_str());
  // KernelBench scores means; the hardened mode medians.
  const bool by_median = line.value("score", "mean") == "median";
  r.speedup = by_median ? r.reference.median_ns / r.candidate.median_ns : r.reference.mean_ns / r.candidate.mean_ns;
  r.verdict = Verdict::ok;
  r.details["speedup"] = line.value("speedup", json::object());
  r.details["speedup_ci"] = line.value("speedup_ci", json::object());
  r.details["score"] = by_median ? "median" : "mean";
  r.details["baseline"] = baseline;
  r.details["seconds"] = line.value("seconds", json::object());
  const double ref_ns = by_median ? r.reference.median_ns : r.reference.mean_ns;
  const double cand_ns = by_median ? r.candidate.median_ns : r.candidate.mean_ns;
  r.message = fmt::format("ok (KernelBench {}): speedup {:.3f}x vs {} by {}s ({} {:.4g} ms, candidate {:.4g} ms)", mode,
                          r.speedup, baseline, by_median ? "median" : "mean", baseline, ref_ns * 1e-6, cand_ns * 1e-6);
  if (line.contains("kernel_tables")) try {
      // The reference's kernels are eager PyTorch's (what the Model launches), with its median.
      const double eager_ns = runtime.contains("eager") ? stats_of(runtime, "eager").median_ns : r.reference.median_ns;
      json profile = kernel_profile(line.at("kernel_tables"), Problem{}, eager_ns, r.candidate.median_ns, cuda::Roofline{});
      if (!profile.is_null()) r.details["kernel_profile"] = std::move(profile);
    } catch (const std::exception& e) {  // feedback only: a bad table costs the profile, not the verdict
      r.details["kernel_profile_error"] = e.what();
    }
  if (line.value("excessive_speedup", false)) {
    r.details["excessive_speedup"] = true;
    r.message += "; over 10x vs eager, which KernelBench flags as a possible reward hack";
  }
  return r;
}

KernelBenchEvaluator::KernelBenchEvaluator(Problem problem, KernelBenchSettings settings)
    : problem_(std::move(problem)), settings_(std::move(settings)) {
  if (problem_.kind != "kernelbench")
    throw InputError(fmt::format("problem '{}' is of kind '{}'; the kernelbench evaluator runs KernelBench-format "
                                 "problem files (.py)",
                                 problem_.name, problem_.kind));
  const fs::path folder =
      settings_.harness.empty() ? data_dir("kernelbench", KMCTS_KERNELBENCH_DIR) : fs::path(settings_.harness);
  harness_ = folder / (settings_.mode + ".py");
  if (!fs::exists(harness_))
    throw InputError(fmt::format("the KernelBench harness '{}' does not exist (evaluator.kernelbench.harness)",
                                 harness_.string()));
  if (settings_.timer_lib.empty()) settings_.timer_lib = kernelbench_timer_library().string();
  seed_hash_ = sha256_hex(problem_.seed_source);
  if (settings_.device == "cpu") settings_.prebuild = false;  // CPU candidates build nothing for a GPU
  if (settings_.prebuild && settings_.cuda_arch.empty()) settings_.cuda_arch = probed_arch(settings_.device);
  if (settings_.cuda_arch.empty()) settings_.prebuild = false;  // no GPU to build for: builds at evaluation
  candidates_ = fs::absolute(settings_.cache_dir.empty() ? default_cache_dir() : fs::path(settings_.cache_dir)) / "kernelbench";
  fs::create_directories(candidates_);
  {
    std::string why;
    confined_argv(SandboxLimits{}, {"true"}, &why);
    private_extensions_ = why.empty() && confinement_plan(true).mount_ns;
  }
  lease_harness_uid();
  if (settings_.profile && settings_.device != "cpu")
    deep_ = std::make_unique<cuda::DeepProfiles>(settings_.profile_when, candidates_.parent_path());
  if (settings_.warm) {
    std::vector<std::string> argv = {"env"};
    if (!settings_.cuda_arch.empty()) argv.push_back("TORCH_CUDA_ARCH_LIST=" + settings_.cuda_arch);
    argv.insert(argv.end(), {settings_.python, (harness_.parent_path() / "serve.py").string(), "--mode",
                             settings_.mode, "--device", settings_.device, "--timer-lib", settings_.timer_lib});
    warm_ = std::make_unique<WarmHarness>(confine_harness(std::move(argv)), harness_.parent_path(),
                                          settings_.mode == "hardened");
  }
}

fs::path KernelBenchEvaluator::extensions_dir(const std::string& source_hash) const {
  return candidates_ / "extensions" / source_hash;
}

namespace {
// Whether `record` (prebuilt.json) says its build was made at `seen`.
bool prebuilt_here(const fs::path& record, const fs::path& seen) {
  std::error_code ec;
  if (!fs::exists(record, ec)) return false;
  try {
    return json::parse(read_file(record)).value("built_at", std::string()) == seen.string();
  } catch (const std::exception&) {
    return false;
  }
}
}  // namespace

fs::path KernelBenchEvaluator::view_extensions_dir(const std::string& source_hash) const {
  return private_extensions_ ? fs::path("/tmp/kmcts-extensions") / source_hash : extensions_dir(source_hash);
}

BuildResult KernelBenchEvaluator::build(const std::string& source) {
  BuildResult b;
  b.source_hash = sha256_hex(source);
  const fs::path file = candidates_ / (b.source_hash + ".py");
  // A stored file is used only if it still holds this source (a candidate runs as our user
  // and could have rewritten another's file, the screen-exempt seed's included).
  const bool stored = fs::exists(file) && sha256_hex(read_file(file)) == b.source_hash;
  // Whole files only, whoever else writes the same candidate: the temp name is this process's
  // and this write's alone (one shared '.part' name let two MPI worker ranks of one host race,
  // and the second rename failed the seed's evaluation).
  if (!stored) write_file_atomic(file, source);
  b.artifact = file.string();
  b.ok = true;
  if (warm_) warm_->prestart();  // torch's start overlaps the builds
  const fs::path built = extensions_dir(b.source_hash) / "prebuilt.json";
  // Only a candidate that builds extensions has something to prebuild (torch's import alone is
  // 3 s of a CPU slot).
  const bool builds = source.find("cpp_extension") != std::string::npos || source.find("load_inline") != std::string::npos;
  // A prebuild counts where it was made at the path this evaluation's builds see (a cache made
  // before the private path, or with the view off, would be built again at every evaluation).
  b.cached = settings_.prebuild && builds ? prebuilt_here(built, view_extensions_dir(b.source_hash)) : stored;
  if (!settings_.prebuild || !builds || b.cached) return b;
  // The prebuild imports the candidate (its module-level code runs): one the static screen
  // would reject is never imported here; its evaluation rejects it before importing it too.
  if (std::string flagged = screen_rejects(b); !flagged.empty()) {
    b.log = "prebuild skipped: the static screen rejects the candidate (" + flagged + ")";
    return b;
  }
  fs::create_directories(built.parent_path());
  PrebuildSpec spec;
  spec.python = settings_.python;
  spec.harness_dir = harness_.parent_path();
  spec.candidate = file;
  spec.extensions = extensions_dir(b.source_hash);
  spec.view_extensions = view_extensions_dir(b.source_hash);
  if (settings_.fast_build) spec.headers = candidates_ / "pch";
  spec.env = build_env(b.source_hash);
  spec.timeout_s = settings_.timeout_s;
  const SandboxResult run = run_prebuild(spec);
  b.seconds = run.wall_seconds;
  json answer;
  try {
    answer = json::parse(last_line(run.out));
  } catch (const std::exception&) {  // the evaluation builds it, holding the GPU
    b.log = "prebuild gave no answer: " + last_line(run.err);
    return b;
  }
  if (answer.value("ok", false)) {
    answer["built_at"] = spec.view_extensions.string();
    write_file_atomic(built, answer.dump() + "\n");
  } else if (answer.value("build_error", false)) {
    b.ok = false;
    b.log = answer.value("error", std::string()) + "\n" + answer.value("traceback", std::string()) + run.err;
  } else {
    b.log = "prebuild: " + answer.value("error", std::string());  // judged at the evaluation
  }
  return b;
}

std::string KernelBenchEvaluator::screen_rejects(const BuildResult& b) const {
  if (settings_.mode != "hardened" || settings_.screen != "reject" || b.source_hash == seed_hash_) return "";
  SandboxLimits limits;
  limits.timeout_s = 60;
  limits.max_output_bytes = 1u << 20;
  const SandboxResult run = run_sandboxed({settings_.python, (harness_.parent_path() / "screen.py").string(), b.artifact},
                                          limits, harness_.parent_path());
  try {
    const json verdict = json::parse(last_line(run.out));
    if (verdict.value("verdict", "") == "clean") return "";
    std::string rules;
    for (const json& f : verdict.value("findings", json::array()))
      if (rules.find(f.value("rule", "")) == std::string::npos) rules += (rules.empty() ? "" : ", ") + f.value("rule", "");
    return verdict.value("verdict", "flagged") + (rules.empty() ? "" : ": " + rules);
  } catch (const std::exception&) {
    return "";  // no answer: the evaluation's own screen decides, before its import
  }
}

std::vector<std::string> KernelBenchEvaluator::harness_arguments(const BuildResult& build) const {
  std::vector<std::string> args = {"--problem",   problem_.raw.value("kernelbench_file", std::string()),
                                   "--candidate", build.artifact,
                                   "--tolerance", settings_.tolerance,
                                   "--device",    settings_.device};
  if (!settings_.time_compile) args.push_back("--no-compile");
  const std::vector<std::string> by_mode =
      settings_.mode == "hardened"
          // The seed is the reference itself: it calls the library by construction, and is
          // never scored, so the screen and the library policy only record what they find there.
          ? std::vector<std::string>{"--screen", build.source_hash == seed_hash_ ? "record" : settings_.screen,
                                     "--library-policy",
                                     build.source_hash == seed_hash_ ? "record" : settings_.library_policy,
                                     "--max-library-share", fmt::format("{}", settings_.max_library_share),
                                     "--eager-process", settings_.eager_process,
                                     "--timer-lib", settings_.timer_lib}
          : std::vector<std::string>{"--trials", std::to_string(settings_.trials)};
  args.insert(args.end(), by_mode.begin(), by_mode.end());
  return args;
}

std::map<std::string, std::string> KernelBenchEvaluator::build_env(const std::string& source_hash) const {
  // The candidate's extensions live (and were prebuilt) under its own folder, built for the
  // same architectures and by the same compiler command: any difference would make torch's
  // ninja build them again at the evaluation, holding the GPU.
  // Triton's cache too: its launchers (and so the candidate's Triton kernels) are then its own.
  const fs::path seen = view_extensions_dir(source_hash);
  std::map<std::string, std::string> env = {{"TORCH_EXTENSIONS_DIR", seen.string()},
                                            {"TRITON_CACHE_DIR", (seen / "triton").string()}};
  if (private_extensions_) env["KMCTS_EXTENSIONS_FROM"] = extensions_dir(source_hash).string();
  if (!settings_.cuda_arch.empty()) env["TORCH_CUDA_ARCH_LIST"] = settings_.cuda_arch;
  if (settings_.fast_build) {  // the wrappers run what the user had set, or torch's defaults
    const char* cxx = std::getenv("CXX");
    const char* nvcc = std::getenv("PYTORCH_NVCC");
    const fs::path folder = fs::absolute(harness_.parent_path());  // ninja runs them from the build folder
    env["CXX"] = (folder / "kb_cxx.py").string();
    env["KMCTS_REAL_CXX"] = cxx && *cxx ? cxx : "c++";
    env["KMCTS_PCH_DIR"] = (candidates_ / "pch").string();
    env["PYTORCH_NVCC"] = (folder / "kb_nvcc.py").string();
    if (nvcc && *nvcc) env["KMCTS_REAL_NVCC"] = nvcc;
  }
  return env;
}

SandboxLimits KernelBenchEvaluator::harness_limits() const {
  SandboxLimits limits;
  // CUDA IPC between the harness and its candidate processes fails across uids: one for the tree.
  limits.keep_uid = !harness_uid_;
  limits.shared_uid = harness_uid_ ? harness_uid_->uid() : 0;
  limits.build = true;     // load_inline's ninja puts its jobs in process groups; the worker makes its own
  limits.max_file_bytes = 4ull << 30;
  limits.tmpfs_options = "mode=1777";  // /dev/shm holds the CPU tensors shared with candidate processes
  // Read-only: a candidate's builds are staged into the harness's /tmp (private_extensions_).
  limits.binds.push_back({candidates_.string(), candidates_.string(), !private_extensions_});
  std::vector<fs::path> needed = {harness_.parent_path(), fs::path(settings_.timer_lib).parent_path()};
  if (const std::string file = problem_.raw.value("kernelbench_file", std::string()); !file.empty())
    needed.push_back(fs::absolute(file).parent_path());
  for (const std::string& folder : python_folders(settings_.python)) needed.emplace_back(folder);
  hide_home(limits, needed);
  return limits;
}

void KernelBenchEvaluator::lease_harness_uid() {
  // Root that can switch uids (not a user namespace's root, whose other uids are unmapped).
  if (geteuid() != 0 || !private_extensions_ || !confinement_plan(true).drop_identity) return;
  harness_uid_ = std::make_unique<UidLease>();
  // What the harness reads, asked under that uid in the harness's own view.
  std::vector<std::string> argv = {
      settings_.python, "-c",
      "import os, sys\n"
      "bad = [p for p in sys.argv[1:] if not os.access(p, os.R_OK | (os.X_OK if os.path.isdir(p) else 0))]\n"
      "print('cannot read: ' + ', '.join(bad) if bad else 'ok')\n",
      harness_.string(), (harness_.parent_path() / "candidate_worker.py").string(), candidates_.string()};
  // The timer where there is one (a CPU harness or a build without CUPTI has none; the harness
  // says so itself when it needs it).
  if (std::error_code ec; fs::exists(settings_.timer_lib, ec)) argv.push_back(settings_.timer_lib);
  if (const std::string file = problem_.raw.value("kernelbench_file", std::string()); !file.empty())
    argv.push_back(fs::absolute(file).string());
  SandboxLimits run;
  run.timeout_s = 60;
  const SandboxResult probe = run_sandboxed(confined_argv(harness_limits(), argv), run);
  const std::string answer = last_line(probe.out);
  if (probe.exited_cleanly() && answer == "ok") return;
  harness_uid_note_ = fmt::format("kmcts's uid kept: under uid {} the harness {}", harness_uid_->uid(),
                                  answer.empty() ? "did not start: " + last_line(probe.err) : answer);
  harness_uid_.reset();
}

std::vector<std::string> KernelBenchEvaluator::confined(std::vector<std::string> argv, std::string* why) const {
  SandboxLimits limits = harness_limits();
  // Its home and temporary files in its private /tmp; torch.compile's workers in its own process
  // (a worker pool would start sessions, which the filter refuses).
  // A candidate's process writes only in its scratch and where its extensions are staged
  // (candidate_worker.guard).
  const fs::path staged = private_extensions_ ? fs::path("/tmp/kmcts-extensions") : candidates_ / "extensions";
  // A user name of its own: a uid kmcts leased has no passwd entry, and torch.compile names its
  // cache folder by getpass.getuser(), which then raises.
  std::vector<std::string> env = {"HOME=/tmp", "TMPDIR=/tmp", "USER=kmcts-harness", "LOGNAME=kmcts-harness",
                                  "TORCHINDUCTOR_COMPILE_THREADS=1", "KMCTS_CANDIDATE_WRITABLE=" + staged.string()};
  if (argv.size() > 1 && argv[0] == "env") argv.insert(argv.begin() + 1, env.begin(), env.end());
  std::vector<std::string> out = confined_argv(limits, argv, why);
  return why->empty() ? out : argv;
}

std::vector<std::string> KernelBenchEvaluator::confine_harness(std::vector<std::string> argv) {
  std::string why;
  std::vector<std::string> out = confined(std::move(argv), &why);
  confinement_ = why.empty() ? confinement_for(harness_limits(), geteuid()).description : "none (" + why + ")";
  if (why.empty() && !harness_uid_note_.empty()) confinement_ += " (" + harness_uid_note_ + ")";
  return out;
}

EvalResult KernelBenchEvaluator::result_of(const HarnessOutcome& run) const {
  EvalResult r;
  if (run.timed_out) {
    r = failed_result(Verdict::timeout, fmt::format("timeout: no result within {} s", settings_.timeout_s), run.err);
  } else if (run.signal != 0) {
    r = failed_result(Verdict::crash, "crash: the harness died with " + signal_name(run.signal), run.err);
  } else {
    try {
      const json line = json::parse(run.line);
      r = result_from_harness(line, settings_.baseline);
      if (r.log.empty()) r.log = run.err;
      // Seconds before the harness began this candidate: Python's and CUDA's start, unless warm.
      if (line.contains("seconds_total"))
        r.details["seconds"]["start"] = std::max(0.0, run.seconds - line.value("seconds_total", 0.0));
    } catch (const std::exception& e) {
      r = failed_result(Verdict::infra_error,
                        fmt::format("the KernelBench harness gave no result (exit {}): {}", run.exit_code,
                                    first_line(run.err.empty() ? std::string(e.what()) : last_line(run.err))),
                        run.err);
    }
  }
  r.run_seconds = run.seconds;
  r.details["confinement"] = confinement_;
  return r;
}

EvalResult KernelBenchEvaluator::measure(const BuildResult& build) {
  if (!build.ok) return compile_error_result(build);
  EvalResult r = settings_.warm ? measure_warm(build) : measure_cold(build);
  if (settings_.device == "cpu") return r;
  const bool wanted = (deep_ && r.ok()) || settings_.diagnosis.wanted(r);
  if (wanted && !private_extensions_) {
    // one_call.py runs the candidate in the harness's own rights, without the guard its process
    // takes in a measurement: only a view of its own (nothing on disk writable) makes that safe.
    r.details["feedback_error"] = "no ncu profile or fault diagnosis: the harness has no view of its own here";
    return r;
  }
  try {
    if (deep_ && r.ok() && deep_->wanted(r.speedup)) profile(build, r);
    if (settings_.diagnosis.wanted(r)) diagnose(build, r);
  } catch (const std::exception& e) {  // feedback only: never the verdict
    r.details["feedback_error"] = e.what();
  }
  return r;
}

SandboxResult KernelBenchEvaluator::run_one_call(const BuildResult& build, const std::vector<std::string>& tool,
                                                 const std::map<std::string, std::string>& extra_env,
                                                 double timeout_s) const {
  std::vector<std::string> argv = {"env"};
  for (const auto& [name, value] : build_env(build.source_hash)) argv.push_back(name + "=" + value);
  for (const auto& [name, value] : extra_env) argv.push_back(name + "=" + value);
  argv.insert(argv.end(), tool.begin(), tool.end());
  argv.insert(argv.end(), {settings_.python, (harness_.parent_path() / "one_call.py").string(), "--problem",
                           problem_.raw.value("kernelbench_file", std::string()), "--candidate", build.artifact,
                           "--device", settings_.device});
  std::string why;
  argv = confined(std::move(argv), &why);
  SandboxLimits limits;
  limits.timeout_s = timeout_s;
  limits.max_output_bytes = 16u << 20;
  return run_sandboxed(argv, limits, harness_.parent_path());
}

void KernelBenchEvaluator::profile(const BuildResult& build, EvalResult& r) const {
  const std::string key = cuda::DeepProfiles::key(build.source_hash, seed_hash_, r.details.value("device", std::string()));
  if (deep_->from_cache(r, key)) return;
  const std::string metrics = cuda::counter_metric_list();
  // One call between cudaProfilerStart and Stop (one_call.py): torch's start, the loads and the
  // warm-up call are not profiled; a call of many kernels has its first 32 profiled.
  const SandboxResult run = run_one_call(
      build,
      {cuda::find_cuda_tool(settings_.ncu, "ncu"), "--csv", "--profile-from-start", "off", "--launch-count", "32",
       "--metrics", metrics, "--target-processes", "all"},
      {}, settings_.timeout_s);
  deep_->record(r, key, run, Problem{}, cuda::Roofline{});
}

void KernelBenchEvaluator::diagnose(const BuildResult& build, EvalResult& r) const {
  // Without torch's caching allocator each tensor is an allocation of its own, so memcheck sees
  // an access past a tensor's end (in a cached block it would land in memory torch owns).
  const SandboxResult run = run_one_call(build, settings_.diagnosis.command(), {{"PYTORCH_NO_CUDA_MEMORY_CACHING", "1"}},
                                         settings_.timeout_s);
  cuda::add_fault(r, run.out + run.err, run.started, run.error, run.wall_seconds);
}

EvalResult KernelBenchEvaluator::measure_cold(const BuildResult& build) {
  std::vector<std::string> argv = {"env"};
  for (const auto& [name, value] : build_env(build.source_hash)) argv.push_back(name + "=" + value);
  argv.insert(argv.end(), {settings_.python, harness_.string()});
  for (auto& a : harness_arguments(build)) argv.push_back(std::move(a));
  argv = confine_harness(std::move(argv));
  SandboxLimits limits;
  limits.timeout_s = settings_.timeout_s;
  limits.max_output_bytes = 64u << 20;
  // The harness imports itself from its folder; extensions build under the cache.
  SandboxResult run = run_sandboxed(argv, limits, harness_.parent_path());
  if (!run.started) return failed_result(Verdict::infra_error, "cannot run the KernelBench harness: " + run.error);
  return result_of({last_line(run.out), run.err, run.timed_out, run.signal, run.exit_code, run.wall_seconds});
}

EvalResult KernelBenchEvaluator::measure_warm(const BuildResult& build) {
  const json request = {{"argv", harness_arguments(build)}, {"env", build_env(build.source_hash)}};
  WarmHarness::Outcome outcome = warm_->request(request, settings_.timeout_s);
  if (!outcome.start_error.empty())
    return failed_result(Verdict::infra_error, "cannot run the KernelBench harness: " + outcome.start_error);
  const WarmProcess::Reply& reply = outcome.reply;
  if (reply.oversized)
    return failed_result(Verdict::infra_error, "the KernelBench harness sent an oversized reply", reply.log);
  if (reply.log_flood)
    return failed_result(Verdict::rejected, "rejected: more than 256 MiB written on stderr during the evaluation",
                         reply.log);
  if (outcome.forged)  // only the candidate runs beside the harness: it wrote the line
    return failed_result(Verdict::rejected,
                         "rejected: a reply without its request's token reached kmcts (a line written into the "
                         "harness's output, not by the harness)",
                         reply.log);
  HarnessOutcome run{reply.line.value_or(""), reply.log, reply.timed_out, reply.signal, reply.exit_code, reply.seconds};
  if (reply.died && reply.signal == 0 && !reply.line)  // it ended without a word: say how
    run.err += fmt::format("\n[the warm harness process ended (exit {}) before replying]", reply.exit_code);
  return result_of(run);
}

json KernelBenchEvaluator::describe() const {
  return {{"evaluator", "kernelbench"},   {"mode", settings_.mode}, {"screen", settings_.screen},
          {"library_policy", settings_.library_policy}, {"max_library_share", settings_.max_library_share},
          {"eager_process", settings_.eager_process},
          {"time_compile", settings_.time_compile},
          {"python", settings_.python},   {"harness", harness_.string()},
          {"tolerance", settings_.tolerance}, {"baseline", settings_.baseline},
          {"trials", settings_.trials},   {"timeout_s", settings_.timeout_s},
          {"device", settings_.device},   {"prebuild", settings_.prebuild}, {"cuda_arch", settings_.cuda_arch},
          {"fast_build", settings_.fast_build}, {"profile", settings_.profile},
          {"profile_when", settings_.profile_when}, {"diagnose_faults", settings_.diagnosis.enabled}};
}

}  // namespace kmcts

KMCTS_REGISTER(kmcts::EvaluatorRegistry, "kernelbench",
               [](const kmcts::Problem& problem, const kmcts::Config& config) -> std::unique_ptr<kmcts::Evaluator> {
                 return std::make_unique<kmcts::KernelBenchEvaluator>(problem,
                                                                      kmcts::KernelBenchSettings::from_config(config));
               })
