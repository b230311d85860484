#include "campaigns/kb_remeasure.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "campaigns/kb_runner.hpp"
#include "core/problem.hpp"
#include "hardware/evaluator.hpp"

namespace kmcts {

using json = nlohmann::json;

json remeasure_candidate(const KbProblemFile& file, const std::string& source, const Config& config) {
  const Problem problem = load_problem(file.path);
  const auto evaluator = EvaluatorRegistry::instance().create("evaluator", "kernelbench", problem, config);
  const EvalResult r = evaluator->evaluate(source);
  if (r.verdict == Verdict::infra_error)  // ours, not the candidate's: the problem stays unfinished
    throw std::runtime_error(fmt::format("{}: the re-measurement of its best candidate failed: {}", file.name, r.message));
  return {{"verdict", to_string(r.verdict)},
          {"message", r.message},
          {"speedup", r.ok() ? r.details.value("speedup", json::object()) : json::object()},
          {"speedup_ci", r.ok() ? r.details.value("speedup_ci", json::object()) : json::object()},
          {"own_share", own_share_of(r.details)},
          {"gpu_seconds", r.run_seconds}};
}

void apply_remeasurement(json& result, const json& remeasured) {
  result["remeasured"] = remeasured;
  result["search_speedup"] = result.value("speedup", json::object());
  result["search_speedup_ci"] = result.value("speedup_ci", json::object());
  result["gpu_seconds"] = result.value("gpu_seconds", 0.0) + remeasured.value("gpu_seconds", 0.0);
  if (remeasured.value("verdict", "") == "ok") {
    result["speedup"] = remeasured.value("speedup", json::object());
    result["speedup_ci"] = remeasured.value("speedup_ci", json::object());
    result["own_share"] = remeasured.value("own_share", json());
    return;
  }
  result["correct"] = false;
  result["speedup"] = json::object();
  result["speedup_ci"] = json::object();
  result["message"] = fmt::format("its best candidate failed the re-measurement: {}", remeasured.value("message", ""));
}

}  // namespace kmcts
