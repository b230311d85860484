#pragma once
// `kmcts ablate`: a grid's runs (campaigns/ablation_grid.hpp) as normal run directories,
// resumable, with their externals recorded once and replayed, and an index for `kmcts report`.
//
// OUT/grid.json           the expanded grid; a later ablate on OUT must bring the same grid
// OUT/index.sqlite        the index (campaigns/ablation_index.hpp)
// OUT/runs/<run_id>/      each run's directory, as `kmcts run --out` makes it
// OUT/aside/<run_id>.N/   an unfinished run's directory, moved aside when the run is redone
// OUT/replay-check/<run_id>/  --replay-only's re-run of a run that did not reproduce (kept to inspect)
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "campaigns/ablation_grid.hpp"
#include "campaigns/replay_misses.hpp"

namespace kmcts {

struct AblationRequest {
  std::filesystem::path grid_file;
  std::filesystem::path out;    // empty: ablations/<grid name>
  std::optional<size_t> jobs;   // runs at once; default default_ablation_jobs()
  bool progress = true;         // progress lines on stderr
  std::string command_line;
};

struct AblationOutcome {
  std::filesystem::path out;
  size_t total = 0;
  size_t done = 0;        // completed runs (before and now)
  size_t failed = 0;      // runs whose search failed (retried by the next ablate)
  size_t unfinished = 0;  // not run, or interrupted
  // --replay-only
  size_t reproduced = 0;
  size_t differ = 0;
  size_t missed = 0;
  bool replay_only = false;
  ReplayMisses replay_misses;  // over the done runs
  /// Every run finished and, with --replay-only, every one of them checked and reproduced.
  bool ok() const { return done == total && differ == 0 && missed == 0 && (!replay_only || reproduced == total); }
};

/// Runs (or resumes) the grid: finished runs are kept, unfinished ones redone from scratch.
/// InputError before anything runs for a bad grid, an OUT another process holds, or an OUT
/// that holds another grid.
AblationOutcome run_ablation(const AblationRequest& request);

/// Re-runs every finished run of the grid in OUT offline (measurements replayed from the run's
/// own directory only, LLM replies from its own cassette) and checks each gives the graph it
/// recorded. One line per run on stdout: reproduced, differs (the first difference) or miss
/// (the source or LLM request nothing recorded).
AblationOutcome replay_ablation(const AblationRequest& request);

/// Runs at once when --jobs is not given: the CPUs this process may use (core/cpus.hpp) when every
/// measurement is replayed (a run is then a coordinator and rule agents, light and
/// independent), else 1: a run that measures for real times kernels on the same cores or
/// GPUs as its neighbours would, and the grid reuses that measurement in every later run.
size_t default_ablation_jobs(const AblationGrid& grid);

/// Ctrl-C: runs in flight finish their work in flight, no run starts. Async-signal-safe.
void request_ablation_stop();

}  // namespace kmcts
