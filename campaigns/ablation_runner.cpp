#include "campaigns/ablation_runner.hpp"

#include <cstdio>

#include <chrono>
#include <map>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "campaigns/ablation_folder.hpp"
#include "campaigns/ablation_index.hpp"
#include "campaigns/run_pool.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "search/run_lock.hpp"
#include "search/run_search.hpp"
#include "core/cpus.hpp"

namespace kmcts {

namespace fs = std::filesystem;
using nlohmann::json;
using detail::run_dir_of;

namespace {

std::string git_revision(const fs::path& dir) {
  const std::string command = fmt::format("git -C '{}' rev-parse HEAD 2>/dev/null", dir.string());
  std::string out;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    char buffer[128];
    while (fgets(buffer, sizeof buffer, pipe)) out += buffer;
    if (pclose(pipe) != 0) out.clear();
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

std::string clock_text(double seconds) {
  const auto s = static_cast<long>(seconds + 0.5);
  return s >= 3600 ? fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60) : fmt::format("{}:{:02}", s / 60, s % 60);
}

void write_grid_meta(AblationIndex& index, const AblationGrid& g, const fs::path& out, const std::string& command_line) {
  std::map<std::string, std::string> meta;
  if (fs::exists(out / "index.sqlite")) meta = read_ablation_grid(out);  // created_at of the first ablate
  meta["name"] = g.name;
  const nlohmann::ordered_json expanded = g.expanded();
  meta["grid_json"] = expanded.dump();
  meta["baseline"] = g.baseline;
  meta["budget"] = std::to_string(g.budget.value_or(g.base.get_int("search.budget")));
  meta["seeds_json"] = json(g.seeds).dump();
  json problems = json::array();
  for (const auto& p : g.problems) problems.push_back(p.name);
  meta["problems_json"] = problems.dump();
  if (!meta.count("created_at")) meta["created_at"] = utc_now();
  meta["kmcts_version"] = KMCTS_VERSION_STRING;
  if (std::string rev = git_revision(g.file.parent_path()); !rev.empty()) meta["git_revision"] = rev;
  meta["command_line"] = command_line;
  std::vector<std::string> axes;
  for (const auto& a : g.axes) axes.push_back(a.name);
  std::vector<AblationConfigRow> configs;
  for (size_t c = 0; c < g.configs.size(); ++c) {
    auto set = expanded["configs"][c]["overrides"].get<std::vector<std::string>>();
    configs.push_back({g.configs[c].name, static_cast<int>(c), g.axis_values(g.configs[c]), set});
  }
  index.write_grid(meta, axes, configs);
}

// What the workers share: which runs of each problem are finished (their measurements are
// reused), the counts for the progress line.
struct GridState {
  std::mutex mutex;
  std::map<size_t, std::vector<fs::path>> finished;  // problem -> run directories
  size_t total = 0, done = 0, failed = 0, running = 0, done_now = 0;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
};

void print_progress(const AblationRequest& r, GridState& s, const std::string& what) {
  if (!r.progress) return;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - s.start).count();
  const size_t left = s.total - s.done;
  std::string eta = "ETA -";
  if (s.done_now > 0 && left > 0) eta = "ETA " + clock_text(elapsed / static_cast<double>(s.done_now) * static_cast<double>(left));
  fmt::print(stderr, "kmcts ablate: [{}/{} done, {} running, {} failed] {} elapsed, {} | {}\n", s.done, s.total, s.running,
             s.failed, clock_text(elapsed), eta, what);
}

// An unfinished run cannot continue bit for bit (its measurements came from the runs finished
// when it started): keep it aside and start again.
void move_aside(const fs::path& out, const AblationRunSpec& run) {
  const fs::path dir = run_dir_of(out, run);
  if (!fs::exists(dir)) return;
  fs::create_directories(out / "aside");
  fs::path aside;
  for (int k = 1; aside.empty() || fs::exists(aside); ++k) aside = out / "aside" / fmt::format("{}.{}", run.run_id, k);
  fs::rename(dir, aside);
}

void run_one(const AblationRequest& r, const AblationGrid& g, const fs::path& out, const AblationRunSpec& run,
             AblationIndex& index, GridState& s) {
  const fs::path dir = run_dir_of(out, run);
  RunExternals externals;
  {
    std::lock_guard lock(s.mutex);
    externals.replay_runs = s.finished[run.problem];
    ++s.running;
  }
  move_aside(out, run);
  externals.run_dir = dir;
  AblationRunRow row = detail::open_row(g, run, "running");
  row.started_at = utc_now();
  index.put_run(row);
  std::string line;
  try {
    const Config config = g.run_config(run, externals);
    const json summary = run_search({g.problems[run.problem].path, config, dir, false, r.command_line, std::nullopt});
    const std::string status = summary.value("status", "");
    if (status == "interrupted" || status == "suspended") {
      row.status = "pending";
      row.error = status + "; the next kmcts ablate on this folder redoes it";
      line = status;
    } else {
      row = detail::finished_row(g, run, out);
      line = row.status == "done" ? fmt::format("{:.2f}x in {} evaluations", row.best_speedup.value_or(0), row.evaluations.value_or(0))
                                  : "failed: " + row.error;
    }
  } catch (const InputError& e) {
    row.status = "pending";
    row.error = e.what();
    index.put_run(row);
    std::lock_guard lock(s.mutex);
    --s.running;
    throw;  // the same for every run: stops the grid
  } catch (const std::exception& e) {
    row.status = "failed";
    row.error = e.what();
    row.finished_at = utc_now();
    line = std::string("failed: ") + e.what();
  }
  index.put_run(row);
  std::lock_guard lock(s.mutex);
  --s.running;
  if (row.status == "done") {
    ++s.done, ++s.done_now;
    s.finished[run.problem].push_back(dir);
  } else if (row.status == "failed") {
    ++s.failed;
  }
  print_progress(r, s, fmt::format("{}: {}", run.run_id, line));
}

}  // namespace

size_t default_ablation_jobs(const AblationGrid& grid) {
  return grid.measures_for_real() ? 1 : static_cast<size_t>(usable_cpus());
}

void request_ablation_stop() { request_pool_stop(); }

AblationOutcome run_ablation(const AblationRequest& r) {
  const AblationGrid g = load_ablation_grid(r.grid_file);
  AblationOutcome outcome;
  const fs::path out = detail::ablation_out(g, r.out);
  outcome.out = out;
  fs::create_directories(out / "runs");
  FolderLock lock(out);  // one ablate per folder at a time
  detail::check_or_record_grid(out, g);
  auto index = AblationIndex::open_for_writing(out);
  write_grid_meta(*index, g, out, r.command_line);

  GridState state;
  state.total = g.runs.size();
  std::vector<AblationRunSpec> todo;
  for (const AblationRunSpec& run : g.runs) {
    if (detail::run_status(run_dir_of(out, run)) == "completed") {
      index->put_run(detail::finished_row(g, run, out));
      state.finished[run.problem].push_back(run_dir_of(out, run));
      ++state.done;
    } else {
      todo.push_back(run);
      index->put_run(detail::open_row(g, run, "pending"));
    }
  }
  const size_t jobs = std::max<size_t>(1, r.jobs.value_or(default_ablation_jobs(g)));
  if (r.progress)
    fmt::print(stderr, "kmcts ablate: grid '{}': {} configurations x {} problems x {} seeds = {} runs ({} done before), {} at once, in {}\n",
               g.name, g.configs.size(), g.problems.size(), g.seeds.size(), g.runs.size(), state.done, jobs, out.string());
  run_pool(todo.size(), jobs, [&](size_t i, size_t) { run_one(r, g, out, todo[i], *index, state); });

  outcome.total = state.total;
  outcome.done = state.done;
  outcome.failed = state.failed;
  outcome.unfinished = state.total - state.done - state.failed;
  std::vector<fs::path> done;
  for (const auto& [problem, dirs] : state.finished) done.insert(done.end(), dirs.begin(), dirs.end());
  outcome.replay_misses = count_replay_misses(done);
  return outcome;
}

}  // namespace kmcts
