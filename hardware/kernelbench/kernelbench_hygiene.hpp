#pragma once
// Problem hygiene of one KernelBench-format problem (kernelbench/harness/hygiene.py, run under
// the harness's interpreter and device): whether its correctness check is vacuous.
#include <filesystem>

#include <nlohmann/json.hpp>

#include "hardware/kernelbench/kernelbench_evaluator.hpp"

namespace kmcts {

/// hygiene.py's JSON line ({"findings": [...], "measurements": {...}}), or {"error": "..."} when
/// the problem or the harness could not be run; never throws for a bad problem.
nlohmann::json kernelbench_hygiene(const std::filesystem::path& problem_file, const KernelBenchSettings& settings);

}  // namespace kmcts
