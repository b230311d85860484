#pragma once
// One search from a problem folder and a config to a finished run directory: the entry
// point the command line and the end-to-end tests share.
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/options.hpp"

namespace kmcts {

struct RunRequest {
  std::filesystem::path problem_dir;
  Config config;
  std::filesystem::path run_dir;  // empty: runs/<problem>-<UTC time>-s<seed>
  bool progress = true;
  std::string command_line;       // recorded in the run
  /// What it takes of the optimisation archive for its Planner, when this run re-runs one that
  /// took it (its run_info's memory_prompt, memory_candidates and memory_k: memory_for()): a
  /// replay asks the prompts the run asked. Unset: taken now.
  std::optional<nlohmann::json> memory;
};

/// Runs the search; returns the summary (status "completed", "failed" or "interrupted").
/// Bad input throws InputError before anything is written.
nlohmann::json run_search(const RunRequest& request);

}  // namespace kmcts
