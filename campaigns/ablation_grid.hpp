#pragma once
// An ablation grid file (configs/ablations/*.json) and its expansion into runs.
//
//   {
//     "name": "pending",                        optional: the file's stem
//     "description": "...",                     optional, for people
//     "base": {"config": "FILE", "set": {"search.workers": 2}},   optional: config file and/or overrides
//     "axes": [                                 in this order; the last varies fastest
//       {"name": "pending", "values": [
//          {"name": "wu_uct", "set": {"search.pending": "wu_uct"}},
//          {"name": "vl",     "set": ["search.pending=virtual_loss"]}]},   object or key=value list
//       {"name": "c", "key": "search.exploration", "values": [0.5, 1, 2]}  one key: bare values
//     ],
//     "exclude": [{"pending": "vl", "c": "2"}],  combinations ruled out (all listed pairs match)
//     "problems": ["problems/cpu/layernorm",    relative to the grid file, or to a folder above it (the repo)
//                  {"path": "problems/cpu/matmul", "recorded": ["bench/search_quality/recorded/matmul-devbox"]}],
//                                               recorded: run directories of the problem (a landscape)
//     "seeds": [0, 1, 2],
//     "budget": 30,                              search.budget of every run (optional: the base's)
//     "baseline": "pending=wu_uct,c=1"          a configuration (name or {"axis": "value"}); default the first
//   }
//
// Configurations are the product of the axes minus the excluded ones, named
// "axis=value,axis=value" ("base" with no axes); runs are configuration x problem x seed, with
// ids "<config>--<problem>--s<seed>" with ',' made '+' and characters other than letters, digits
// and ._=+- made _ (policy=uct,c=1 on matmul with seed 0: policy=uct+c=1--matmul--s0).
// Every error is an InputError naming the grid file and the culprit, raised by
// load_ablation_grid() before anything runs (see the checks in ablation_grid_checks.cpp).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/options.hpp"

namespace kmcts {

using Overrides = std::vector<std::pair<std::string, nlohmann::json>>;  // key -> value, in order

struct AblationAxisValue {
  std::string name;
  Overrides set;
};

struct AblationAxis {
  std::string name;
  std::vector<AblationAxisValue> values;
};

struct AblationConfiguration {
  std::string name;
  std::vector<size_t> choice;  // the value's index on each axis
};

struct AblationProblem {
  std::string name;            // the problem's own name (problem.json)
  std::filesystem::path path;  // absolute
  std::vector<std::filesystem::path> recorded;  // runs of it whose measurements every run replays
};

struct AblationRunSpec {
  std::string run_id;
  size_t config = 0;
  size_t problem = 0;
  int64_t seed = 0;
};

/// Where each run's externals come from and go to (set by the runner, see run_config()).
struct RunExternals {
  std::vector<std::filesystem::path> replay_runs;  // finished runs whose measurements are reused
  std::filesystem::path run_dir;                   // the run's own directory (its LLM cassette)
};

struct AblationGrid {
  std::filesystem::path file;
  std::string name;
  std::string description;
  nlohmann::json base_record;  // {"config": absolute path or null, "set": {...}}
  Config base;
  std::vector<AblationAxis> axes;
  nlohmann::json exclude = nlohmann::json::array();
  std::vector<AblationConfiguration> configs;
  std::vector<AblationProblem> problems;
  std::vector<int64_t> seeds;
  std::optional<int64_t> budget;
  std::string baseline;
  std::vector<AblationRunSpec> runs;

  /// The overrides a configuration applies to the base, in axis order.
  Overrides overrides(const AblationConfiguration& config) const;
  /// {"axis": "value name"} in axis order.
  nlohmann::ordered_json axis_values(const AblationConfiguration& config) const;
  /// A run's config: base, the configuration's overrides, the seed, the budget and
  /// search.deterministic=true; measurements through the replay evaluator over the problem's
  /// recorded runs and `externals.replay_runs` (and the base's replay runs when the base
  /// replays; else the base's evaluator is the fallback that measures what none recorded);
  /// with LLM agents, a cassette recorded in the run directory.
  Config run_config(const AblationRunSpec& run, const RunExternals& externals) const;
  /// The grid as expanded (base config in full, problems by name and path, configurations):
  /// recorded in OUT/grid.json and the index; identity() is what a resume must match.
  nlohmann::ordered_json expanded() const;
  nlohmann::ordered_json identity() const;
  /// True when some run may measure for real (the fallback evaluator), not only replay.
  bool measures_for_real() const;
};

/// Reads, expands and checks a grid file. InputError (one line, naming the file) for unknown
/// keys, bad values, duplicate names, conflicting or ineffective overrides, a baseline that is
/// not a configuration, problems that do not load, or any run config that would not start.
AblationGrid load_ablation_grid(const std::filesystem::path& file);

/// The config that re-runs a finished run offline (--replay-only): its recorded config, with
/// measurements replayed from RUN_DIR alone (no fallback) and, with LLM agents, replies from
/// RUN_DIR/cassette.jsonl alone.
Config offline_replay_config(const nlohmann::json& recorded_config, const std::filesystem::path& run_dir);

/// Keys kmcts ablate sets itself; an axis may not set them.
const std::vector<std::string>& ablation_reserved_keys();

/// Why `key` has no effect in `config` ("" when it may have one): e.g. search.pending under
/// search.strategy=beam, or search.puct.c under search.policy=uct.
std::string ineffective_option(const std::string& key, const Config& config);

/// Checks a grid already expanded: conflicts between axes, ineffective overrides, every run
/// config built and every search part constructed. Called by load_ablation_grid().
void check_ablation_grid(const AblationGrid& grid);

}  // namespace kmcts
