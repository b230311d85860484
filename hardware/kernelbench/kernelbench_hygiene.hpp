#pragma once
// Problem hygiene of one KernelBench-format problem (kernelbench/harness/hygiene.py, run under
// the harness's interpreter and device): whether its correctness check is vacuous.
#include <filesystem>

#include <nlohmann/json.hpp>

#include "hardware/kernelbench/kernelbench_evaluator.hpp"

namespace kmcts {

/// hygiene.py's JSON line ({"findings": [...], "measurements": {...}, "seconds": s}), or
/// {"error": "..."} when the problem or the harness could not be run; never throws for a bad
/// problem. Findings are cached under evaluator.cache_dir by the file's content, the tolerance
/// and the device kind: a rerun returns them ("cached": true) without running the check.
nlohmann::json kernelbench_hygiene(const std::filesystem::path& problem_file, const KernelBenchSettings& settings);

/// The check itself, uncached.
nlohmann::json run_hygiene(const std::filesystem::path& problem_file, const KernelBenchSettings& settings);

}  // namespace kmcts
