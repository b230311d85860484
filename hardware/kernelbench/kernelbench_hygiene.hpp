#pragma once
// Problem hygiene of KernelBench-format problems (kernelbench/harness/hygiene.py, run under
// the harness's interpreter and device): whether their correctness check is vacuous.
#include <filesystem>
#include <vector>

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

/// Checks every problem whose findings are not cached yet in one hygiene.py process, so that
/// Python's and torch's start (seconds) is paid once, not per problem, and caches what it finds;
/// kernelbench_hygiene() then answers from the cache. A problem the batch could not check (an
/// error, the process dying or timing out part-way) stays uncached and is checked alone later.
struct HygieneBatch {
  size_t checked = 0, cached_before = 0, failed = 0;
  double seconds = 0;  // the batch process's wall time, its start included
};
HygieneBatch prefill_hygiene(const std::vector<std::filesystem::path>& problem_files, const KernelBenchSettings& settings);

}  // namespace kmcts
