#pragma once
// The index of an ablation grid: OUT/index.sqlite, one row per run of `kmcts ablate`, next to
// the run folders (OUT/runs/<run_id>/). `kmcts ablate` writes it; `kmcts report` reads it
// through the read_ablation_* functions below, never through SQL of its own.
//
// Tables (names are an interface: add columns, never rename):
//   grid(key TEXT PRIMARY KEY, value TEXT)   name, grid_json (the expanded grid file), baseline
//                                             (a configuration name), budget, seeds_json,
//                                             problems_json, created_at, kmcts_version,
//                                             git_revision (when known), command_line
//   axes(position INTEGER PRIMARY KEY, name TEXT)
//   configs(config TEXT PRIMARY KEY, position INTEGER, axis_values_json TEXT, overrides_json TEXT)
//                                             axis_values_json: {"axis": "value name", ...} in axis
//                                             order; overrides_json: ["key=value", ...] as applied
//   runs(run_id TEXT PRIMARY KEY, config, problem, seed, run_dir (relative to OUT), status
//        (pending|running|done|failed), error, best_speedup (vs the problem's reference, the run
//        summary's best.speedup), best_over_seed, evaluations, failures, agent_calls, tokens,
//        dollars, wall_s, gpu_s (sum of the evaluations' run seconds, recorded ones included),
//        started_at, finished_at)
// Metrics are NULL until a run is done (and stay NULL where its summary lacks them).
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kmcts {

struct AblationConfigRow {
  std::string config;                    // the configuration's name, e.g. "policy=uct,c=1"
  int position = 0;                      // 0, 1, ... in expansion order
  nlohmann::ordered_json axis_values;    // {"axis": "value name"} in axis order
  std::vector<std::string> overrides;    // "key=value", as applied on top of the base config
};

struct AblationRunRow {
  std::string run_id;
  std::string config;
  std::string problem;
  int64_t seed = 0;
  std::string run_dir;   // relative to OUT
  std::string status = "pending";  // pending | running | done | failed
  std::string error;
  std::optional<double> best_speedup;
  std::optional<double> best_over_seed;
  std::optional<int64_t> evaluations;
  std::optional<int64_t> failures;
  std::optional<int64_t> agent_calls;
  std::optional<int64_t> tokens;
  std::optional<double> dollars;
  std::optional<double> wall_s;
  std::optional<double> gpu_s;
  std::string started_at;   // UTC, ISO 8601; empty until started
  std::string finished_at;  // empty until done or failed
};

/// Writer of OUT/index.sqlite. One process writes (the one holding OUT's FolderLock); its
/// methods may be called from several threads. WAL mode, so readers see a grid that is running.
class AblationIndex {
 public:
  /// Opens OUT/index.sqlite, creating it and its tables if needed (OUT must exist).
  static std::unique_ptr<AblationIndex> open_for_writing(const std::filesystem::path& out);
  ~AblationIndex();
  AblationIndex(const AblationIndex&) = delete;
  AblationIndex& operator=(const AblationIndex&) = delete;

  /// Replaces the grid table, the axes and the configs in one transaction.
  void write_grid(const std::map<std::string, std::string>& grid, const std::vector<std::string>& axes,
                  const std::vector<AblationConfigRow>& configs);
  /// Inserts or replaces a run's row.
  void put_run(const AblationRunRow& row);

 private:
  struct Impl;
  explicit AblationIndex(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Readers: InputError naming the file if OUT has no index (or not one of ours).
std::map<std::string, std::string> read_ablation_grid(const std::filesystem::path& out);
std::vector<std::string> read_ablation_axes(const std::filesystem::path& out);  // in axis order
std::vector<AblationConfigRow> read_ablation_configs(const std::filesystem::path& out);  // by position
/// Every run, ordered by configuration position, problem, seed.
std::vector<AblationRunRow> read_ablation_runs(const std::filesystem::path& out);

}  // namespace kmcts
