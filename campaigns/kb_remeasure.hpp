#pragma once
// The final, independent measurement of a KernelBench problem's best candidate: the search
// picked it as the fastest of many noisy measurements, so its own figure is biased upwards (the
// winner's curse). Like KernelBench's separate evaluation step, the leaderboard scores one new
// evaluation of it by a fresh evaluator (new harness processes, the same protocol).
#include <string>

#include <nlohmann/json.hpp>

#include "campaigns/kb_problems.hpp"
#include "core/options.hpp"

namespace kmcts {

/// Evaluates `source` once for problem `file` with the campaign's evaluator settings in `config`:
/// {"verdict", "message", "speedup": {eager, compile}, "speedup_ci", "gpu_seconds"}. Throws
/// std::runtime_error when the evaluation itself failed (infra_error): the problem stays unfinished.
nlohmann::json remeasure_candidate(const KbProblemFile& file, const std::string& source, const Config& config);

/// Applies a re-measurement to a problem's result: its speedups become the re-measured ones
/// (the search's are kept as "search_speedup"); a candidate that fails it is not counted correct.
void apply_remeasurement(nlohmann::json& result, const nlohmann::json& remeasured);

}  // namespace kmcts
