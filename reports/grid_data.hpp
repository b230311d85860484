#pragma once
// A grid folder as the report reads it: the index's grid facts and configurations, and every
// finished run with its best-so-far curve read from its run store.
#include <filesystem>
#include <string>
#include <vector>

#include "campaigns/ablation_index.hpp"
#include "campaigns/replay_misses.hpp"
#include "reports/run_curve.hpp"

namespace kmcts {

struct GridRun {
  AblationRunRow row;
  RunCurve curve;
  std::filesystem::path dir;  // the run directory (absolute or relative to the cwd)
};

struct GridData {
  std::filesystem::path dir;
  std::string name;
  std::string baseline;                 // a configuration name
  int budget = 0;                       // evaluations per run
  std::vector<std::string> configs;     // by position
  std::vector<AblationConfigRow> config_rows;  // by position
  std::vector<std::string> problems;    // sorted
  std::vector<GridRun> runs;            // the runs with status "done", in index order
  std::vector<AblationRunRow> left_out; // the others (pending, running, failed): not in any statistic
  ReplayMisses replay_misses;           // over the done runs
  /// What the done runs' evaluators timed (timed_on of their descriptions): "GPU", "CPU",
  /// "simulated", or "" when they differ or cannot tell. Names the measurement-time column.
  std::string timed_on;
};

/// Reads OUT/index.sqlite and the store of every done run. `baseline` replaces the grid's own
/// baseline when not empty. InputError (one line, naming the culprit) if OUT is not a grid,
/// the baseline is not one of its configurations, or a done run's store cannot be read.
GridData load_grid(const std::filesystem::path& dir, const std::string& baseline = "");

/// Whether DIR looks like a grid folder (has index.sqlite) rather than a run directory.
bool is_grid_dir(const std::filesystem::path& dir);

}  // namespace kmcts
