#pragma once
// The kernelbench evaluator: each candidate (a Python file defining ModelNew) is evaluated by
// the Python harness under the GPU machine's python3 with torch (warm processes, harness/serve.py,
// or one process per candidate with evaluator.kernelbench.warm=false), and its JSON line
// becomes an EvalResult. Two modes (evaluator.kernelbench.mode):
//  - hardened (the default reward): harness/hardened.py; the candidate in yet another process,
//    CUPTI timing through libkmcts_kb_timer.so, medians, a static screen, every timed output
//    checked (see hardened.py);
//  - faithful: harness/faithful.py, exactly as KernelBench's official runner scores (REFERENCE.md),
//    by means.
// The speedup is against the baseline chosen by evaluator.kernelbench.baseline (eager, or
// torch.compile).
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hardware/confine.hpp"
#include "hardware/cuda/deep_profile.hpp"
#include "hardware/cuda/fault_diagnosis.hpp"
#include "hardware/evaluator.hpp"
#include "hardware/kernelbench/warm_harness.hpp"
#include "hardware/sandbox.hpp"

namespace kmcts {

struct KernelBenchSettings {
  std::string python = "python3";
  std::string harness;             // folder of faithful.py and hardened.py; "" = the installed or source copy
  std::string tolerance = "current";  // kb_metrics.TOLERANCES: current (1e-4) or paper (1e-2)
  std::string baseline = "eager";  // the speedup's reference: eager or compile
  int trials = 100;
  std::string mode = "hardened";   // or faithful
  std::string screen = "reject";   // hardened: reject or record what the static screen flags
  std::string library_policy = "report";  // hardened: report, limit or all (library kernels in the timed calls)
  double max_library_share = 0.5;         // library_policy=limit
  std::string eager_process = "child";    // hardened: eager timed in a fresh process (child) or the harness
  std::string timer_lib;           // hardened: libkmcts_kb_timer.so; "" = kernelbench_timer_library()
  bool time_compile = false;       // time torch.compile of the reference too
  bool prebuild = true;            // build extensions on the CPU pool before the GPU evaluation
  std::string cuda_arch;           // TORCH_CUDA_ARCH_LIST of prebuilds; "" = probed
  bool fast_build = true;          // harness/kb_cxx.py and kb_nvcc.py as the extension builds' compilers
  std::string device = "0";        // GPU index, or "cpu" (protocol tests only)
  double timeout_s = 900;          // a load_inline build alone can take a minute
  std::string cache_dir;           // candidates by content; "" = default_cache_dir()
  bool warm = true;                // warm harness processes (harness/serve.py) instead of one per candidate
  bool profile = false;            // ncu counters of one call after an ok measurement (one_call.py)
  std::string profile_when = "best";  // which ones: "best" (each new best) or "all"
  std::string ncu;                 // evaluator.cuda.ncu: "" = found like nvcc
  cuda::FaultDiagnosis diagnosis;  // compute-sanitizer after a memory fault (fault_diagnosis.hpp)
  static KernelBenchSettings from_config(const Config& c);
};

/// The CUPTI timing library the hardened harness loads: the installed copy, else the build tree's.
std::filesystem::path kernelbench_timer_library();

/// The harness's JSON line (faithful.py or hardened.py) as a result: compile_error when the candidate did not
/// load, crash when it raised, wrong_answer when a trial failed, ok with the baseline's and the
/// candidate's CUDA-event times otherwise. Throws std::runtime_error on a line it cannot read.
EvalResult result_from_harness(const nlohmann::json& line, const std::string& baseline);

class KernelBenchEvaluator : public Evaluator {
 public:
  KernelBenchEvaluator(Problem problem, KernelBenchSettings settings);
  /// Stores the candidate by content hash and, with prebuild, builds its extensions with no GPU
  /// visible into its own TORCH_EXTENSIONS_DIR (cached by content): a compiler failure is a
  /// compile error here, anything else is left to the evaluation.
  BuildResult build(const std::string& source) override;
  EvalResult measure(const BuildResult& build) override;
  nlohmann::json describe() const override;

 private:
  Problem problem_;
  KernelBenchSettings settings_;
  std::filesystem::path harness_;
  std::filesystem::path candidates_;
  std::string seed_hash_;  // the seed (the reference, ModelNew a subclass of Model) is exempt from the screen's verdict
  std::unique_ptr<WarmHarness> warm_;  // null: one harness process per candidate
  std::unique_ptr<cuda::DeepProfiles> deep_;  // evaluator.kernelbench.profile on a GPU
  std::string confinement_;  // what confines the harness and its candidate processes, or why nothing does
  // The harness gets a view of its own: the cache is read-only in it, and each candidate's
  // extensions are built (prebuild) and loaded (a copy the harness stages) at one path in a
  // private /tmp, view_extensions_dir (harness/ext_stage.py).
  bool private_extensions_ = false;
  // kmcts runs as root and the harness's view keeps the cache read-only: the harness tree runs
  // under this leased uid, not root (a root without capabilities still owns root's files and
  // may connect to root's sockets). Null: kmcts's uid without capabilities (harness_uid_note_
  // says why, where a lease was tried).
  std::unique_ptr<UidLease> harness_uid_;
  std::string harness_uid_note_;

  struct HarnessOutcome {  // one run of the harness, warm or not
    std::string line, err;
    bool timed_out = false;
    int signal = 0, exit_code = -1;
    double seconds = 0;
  };
  std::filesystem::path extensions_dir(const std::string& source_hash) const;  // in the cache
  /// Where the candidate's builds see its extension folder: the cache's, or with
  /// private_extensions_ a path of the private /tmp of the prebuild's and the harness's views.
  std::filesystem::path view_extensions_dir(const std::string& source_hash) const;
  /// "" unless hardened mode's static screen rejects the candidate (then its verdict and rules):
  /// such a candidate is not imported by the prebuild.
  std::string screen_rejects(const BuildResult& b) const;
  std::vector<std::string> harness_arguments(const BuildResult& build) const;
  /// What a build of the candidate's extensions sees, in the prebuild and at the evaluation alike.
  std::map<std::string, std::string> build_env(const std::string& source_hash) const;
  EvalResult result_of(const HarnessOutcome& run) const;
  /// `argv` (env VAR=... python harness ...) run through kmcts-confine: the harness and every
  /// process it starts (the candidate's, in hardened mode; the candidate runs in it in faithful
  /// mode) in one view with no network, no capabilities, the home hidden, the cache read-only
  /// (nothing on disk writable). Sets confinement_.
  std::vector<std::string> confine_harness(std::vector<std::string> argv);
  /// confine_harness's argv without recording it (`why`: empty, or why nothing confines it,
  /// and then `argv` itself).
  std::vector<std::string> confined(std::vector<std::string> argv, std::string* why) const;
  /// One call of the candidate (harness/one_call.py) under `tool` (ncu's or compute-sanitizer's
  /// command), confined as the harness, with the candidate's extension environment and `env`.
  SandboxResult run_one_call(const BuildResult& build, const std::vector<std::string>& tool,
                             const std::map<std::string, std::string>& env, double timeout_s) const;
  /// Nsight Compute's counters of one call, into details.hw_counters (or hw_counters_error).
  void profile(const BuildResult& build, EvalResult& r) const;
  /// The faulting call again under compute-sanitizer (fault_diagnosis.hpp).
  void diagnose(const BuildResult& build, EvalResult& r) const;
  EvalResult measure_cold(const BuildResult& build);
  /// The harness's view and limits (confine_harness), with its uid as far as decided.
  SandboxLimits harness_limits() const;
  /// Leases the harness's uid (see harness_uid_) and checks, through kmcts-confine, that under it
  /// the harness can read what it must (the interpreter, the harness, the problem, the timer,
  /// the cache); otherwise gives the lease back and says why in harness_uid_note_.
  void lease_harness_uid();
  EvalResult measure_warm(const BuildResult& build);
};

}  // namespace kmcts
