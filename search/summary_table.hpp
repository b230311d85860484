#pragma once
// The few lines printed at the end of `kmcts run` and by `kmcts show`.
#include <string>

#include <nlohmann/json.hpp>

namespace kmcts {

/// Renders the coordinator's summary JSON as an aligned two-column table, one fact per line
/// (problem, status, seed, best, speedup, plan history, evaluations, nodes, wall time, run
/// directory, message). Absent keys render as "-", so it works for failed runs too.
std::string format_summary_table(const nlohmann::json& summary);

/// "850 ns", "12.3 us", "4.56 ms", "1.20 s": three significant digits in a readable unit.
std::string format_duration_ns(double ns);

}  // namespace kmcts
