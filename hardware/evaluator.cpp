#include "hardware/evaluator.hpp"

#include <fmt/format.h>

#include "core/text.hpp"
#include "hardware/child_env.hpp"
#include "hardware/confine.hpp"

KMCTS_OPTION("evaluator.name", String, "auto", std::nullopt, std::nullopt,
             "Evaluator by name: cpu, cuda, kernelbench, synthetic, replay; auto = the problem's kind (cpu, cuda or kernelbench).")

namespace kmcts {

namespace {
EvaluatorPlacement& placement() {
  static EvaluatorPlacement p;
  return p;
}
}  // namespace

void set_evaluator_placement(EvaluatorPlacement p) { placement() = std::move(p); }

std::unique_ptr<Evaluator> make_evaluator(const Problem& problem, const Config& config) {
  if (placement() && config.get_string("evaluator.name") != "replay") return placement()(problem, config);
  return make_local_evaluator(problem, config);
}

std::unique_ptr<Evaluator> make_local_evaluator(const Problem& problem, const Config& config) {
  // What the children of this evaluator (and of everything after it) get of kmcts's environment.
  set_env_passthrough(split_list(config.get_string("evaluator.env_passthrough")));
  set_confinement_enabled(config.get_bool("evaluator.confine"));
  set_confinement_view(config.get_bool("evaluator.confine_view"));
  set_confinement_max_processes(static_cast<uint64_t>(config.get_int("evaluator.max_processes")));
  std::string name = config.get_string("evaluator.name");
  if (name == "auto") name = problem.kind;
  return EvaluatorRegistry::instance().create("evaluator", name, problem, config);
}

std::string timed_on(const nlohmann::json& described) {
  if (!described.is_object()) return "";
  // Local evaluators name themselves in "evaluator" (the synthetic one in "name"); a remote
  // one (--mpi) has "name": "remote" and the evaluator it runs in "evaluator".
  std::string name = described.value("evaluator", described.value("name", ""));
  if (name == "replay") {
    const std::string recorded = timed_on(described.value("device", nlohmann::json()));
    return recorded.empty() ? timed_on(described.value("fallback", nlohmann::json())) : recorded;
  }
  if (name == "cuda" || name == "hip") return "GPU";
  if (name == "cpu") return "CPU";
  if (name == "synthetic") return "simulated";
  if (name == "kernelbench") return described.value("device", "cuda") == "cpu" ? "CPU" : "GPU";
  return "";
}

EvalResult compile_error_result(const BuildResult& built) {
  EvalResult result;
  result.verdict = Verdict::compile_error;
  result.message = "compile error: " + first_line(built.log);
  result.log = built.log;
  result.compile_seconds = built.seconds;
  result.compile_cached = built.cached;
  return result;
}

EvalResult Evaluator::measure_built(const BuildResult& built) {
  EvalResult result = measure(built);
  result.compile_seconds = built.seconds;
  result.compile_cached = built.cached;
  return result;
}

EvalResult Evaluator::evaluate(const std::string& source) {
  BuildResult built = build(source);
  return built.ok ? measure_built(built) : compile_error_result(built);
}

}  // namespace kmcts
