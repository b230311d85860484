#pragma once
// An evaluator turns a variant's source into a verdict and a measured speedup.
// Two phases so the coordinator can keep compiles off measurement slots:
//   build()   - CPU work (compile, cached by content); many may run at once;
//   measure() - correctness + timing; one per measurement slot.
// Both are blocking and thread-safe; the coordinator runs them on its pools.
// Implementations register by name in EvaluatorRegistry ("cpu", "synthetic", ...).
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "core/eval_result.hpp"
#include "core/options.hpp"
#include "core/problem.hpp"
#include "core/registry.hpp"

namespace kmcts {

struct BuildResult {
  bool ok = false;
  std::string source_hash;   // sha256 of the source
  std::string artifact;      // e.g. path to the shared object
  std::string log;           // compiler output (warnings, or the error)
  double seconds = 0;
  bool cached = false;
  nlohmann::json resources = nlohmann::json::object();  // registers, spills, ... where known
};

class Evaluator {
 public:
  virtual ~Evaluator() = default;
  virtual BuildResult build(const std::string& source) = 0;
  /// Measures a successful build against the problem's reference.
  virtual EvalResult measure(const BuildResult& build) = 0;
  /// A description for `kmcts doctor` and the run record (compiler version, device).
  virtual nlohmann::json describe() const = 0;
  /// Measurements that can run at once (one per GPU for the cuda evaluator); the
  /// coordinator's measurement pool takes this size when search.measure_slots is 0.
  virtual int measure_slots() const { return 1; }

  /// build() then measure(); a failed build becomes a compile_error result.
  EvalResult evaluate(const std::string& source);
  /// measure() of a successful build, with the build's cost recorded in the result (an
  /// evaluator that builds elsewhere, as the remote one does, reports the cost itself).
  virtual EvalResult measure_built(const BuildResult& build);
};

/// The result of a variant whose build failed: compile_error with the compiler's message.
EvalResult compile_error_result(const BuildResult& build);

/// What an evaluator's description (describe(), as a run's info records it) says its
/// measurements timed: "GPU", "CPU", "simulated" (the synthetic evaluator), or "" when it
/// cannot tell. A replay evaluator's is that of the runs it replays.
std::string timed_on(const nlohmann::json& described);

/// Factories receive the problem and the validated config.
using EvaluatorRegistry = Registry<Evaluator, const Problem&, const Config&>;

/// The evaluator evaluator.name names ("auto": the one of the problem's kind), or, where a
/// placement is set (`--mpi`), what the placement makes of the problem.
std::unique_ptr<Evaluator> make_evaluator(const Problem& problem, const Config& config);

/// The evaluator evaluator.name names, here, whatever the placement.
std::unique_ptr<Evaluator> make_local_evaluator(const Problem& problem, const Config& config);

/// Where evaluations run, for the whole process: `kmcts ... --mpi` sets one that sends them to
/// the worker ranks (hardware/remote); an empty function (the default) runs them here. The
/// replay evaluator stays here either way: its records are in this process's run folders.
using EvaluatorPlacement = std::function<std::unique_ptr<Evaluator>(const Problem&, const Config&)>;
void set_evaluator_placement(EvaluatorPlacement placement);

}  // namespace kmcts
