#include "reports/grid_data.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"
#include "hardware/evaluator.hpp"
#include "search/run_store.hpp"

namespace kmcts {
namespace fs = std::filesystem;

bool is_grid_dir(const fs::path& dir) { return fs::exists(dir / "index.sqlite"); }

namespace {

int grid_budget(const std::map<std::string, std::string>& grid, const std::vector<GridRun>& runs) {
  const auto it = grid.find("budget");
  if (it != grid.end()) {
    try {
      const int budget = std::stoi(it->second);
      if (budget > 0) return budget;
    } catch (const std::exception&) {
      // "null" or empty: no evaluation budget was set; the runs say how far they went.
    }
  }
  int most = 0;
  for (const GridRun& r : runs) most = std::max(most, r.curve.evaluations());
  return most;
}

}  // namespace

GridData load_grid(const fs::path& dir, const std::string& baseline) {
  if (!fs::is_directory(dir)) throw InputError(fmt::format("grid folder '{}' does not exist", dir.string()));
  if (!is_grid_dir(dir))
    throw InputError(fmt::format("'{}' is not a grid folder (no index.sqlite; for one run use --html FILE)", dir.string()));
  GridData g;
  g.dir = dir;
  const auto grid = read_ablation_grid(dir);
  g.name = grid.count("name") ? grid.at("name") : dir.filename().string();
  g.config_rows = read_ablation_configs(dir);
  for (const auto& c : g.config_rows) g.configs.push_back(c.config);
  if (g.configs.empty()) throw InputError(fmt::format("grid '{}' has no configurations", dir.string()));
  g.baseline = !baseline.empty() ? baseline : grid.count("baseline") ? grid.at("baseline") : "";
  if (g.baseline.empty()) g.baseline = g.configs.front();
  if (std::find(g.configs.begin(), g.configs.end(), g.baseline) == g.configs.end())
    throw InputError(fmt::format("baseline '{}' is not a configuration of grid '{}' (known: {})", g.baseline,
                                 dir.string(), fmt::join(g.configs, ", ")));
  std::set<std::string> problems;
  for (AblationRunRow& row : read_ablation_runs(dir)) {
    if (row.status != "done") {
      g.left_out.push_back(std::move(row));
      continue;
    }
    GridRun run;
    run.dir = dir / row.run_dir;
    try {
      const auto store = RunStore::open(run.dir);
      run.curve = read_run_curve(*store);
      const std::string timed = timed_on(store->run_info().value("evaluator", nlohmann::json()));
      g.timed_on = g.runs.empty() || timed == g.timed_on ? timed : "";
    } catch (const std::exception& e) {
      throw InputError(fmt::format("run '{}' of grid '{}' is done but its store cannot be read: {}", row.run_id,
                                   dir.string(), e.what()));
    }
    problems.insert(row.problem);
    g.replay_misses.add(run.curve.replay_misses, run.curve.evaluations());
    run.row = std::move(row);
    g.runs.push_back(std::move(run));
  }
  g.problems.assign(problems.begin(), problems.end());
  g.budget = grid_budget(grid, g.runs);
  return g;
}

}  // namespace kmcts
