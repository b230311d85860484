#include "campaigns/ablation_folder.hpp"

#include <chrono>
#include <ctime>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "search/run_store.hpp"

namespace kmcts::detail {

namespace fs = std::filesystem;
using nlohmann::json;
using nlohmann::ordered_json;

namespace {


template <typename T>
std::optional<T> number(const json& object, const char* key) {
  if (!object.contains(key) || !object[key].is_number()) return std::nullopt;
  return object[key].get<T>();
}

}  // namespace


fs::path ablation_out(const AblationGrid& grid, const fs::path& requested) {
  return requested.empty() ? fs::path("ablations") / grid.name : requested;
}

void check_or_record_grid(const fs::path& out, const AblationGrid& grid) {
  const fs::path file = out / "grid.json";
  const ordered_json mine = grid.identity();
  if (!fs::exists(file)) {
    ordered_json record = grid.expanded();
    record["identity"] = mine;
    write_file_atomic(file, record.dump(2) + "\n");
    return;
  }
  const ordered_json had = ordered_json::parse(read_file(file), nullptr, false);
  if (had.is_discarded() || !had.contains("identity"))
    throw InputError(fmt::format("{} is not a grid record of kmcts ablate; use another --out", file.string()));
  const ordered_json& theirs = had["identity"];
  for (const auto& [key, value] : mine.items()) {
    const ordered_json there = theirs.value(key, ordered_json());
    if (there == value) continue;
    std::string a = there.dump(), b = value.dump();
    if (a.size() > 120 || b.size() > 120) a = "(see its grid.json)", b = "(this file's)";
    throw InputError(fmt::format("{} holds another grid: its \"{}\" is {}, not {} as in {}; run it with the grid file it "
                                 "was made from ({}) or use another --out",
                                 out.string(), key, a, b, grid.file.string(), had.value("file", "?")));
  }
}

fs::path run_dir_of(const fs::path& out, const AblationRunSpec& run) { return out / "runs" / run.run_id; }

std::optional<std::string> run_status(const fs::path& run_dir) {
  if (!fs::exists(run_dir / "run.sqlite")) return std::nullopt;
  try {
    return RunStore::open(run_dir)->status();
  } catch (const std::exception&) {
    return std::string("corrupt");  // killed while it was being created: redone like any unfinished run
  }
}

AblationRunRow open_row(const AblationGrid& grid, const AblationRunSpec& run, const std::string& status) {
  AblationRunRow row;
  row.run_id = run.run_id;
  row.config = grid.configs.at(run.config).name;
  row.problem = grid.problems.at(run.problem).name;
  row.seed = run.seed;
  row.run_dir = (fs::path("runs") / run.run_id).string();
  row.status = status;
  return row;
}

AblationRunRow finished_row(const AblationGrid& grid, const AblationRunSpec& run, const fs::path& out) {
  const fs::path dir = run_dir_of(out, run);
  auto store = RunStore::open(dir);
  const json summary = store->summary().value_or(json::object());
  AblationRunRow row = open_row(grid, run, summary.value("status", "") == "completed" ? "done" : "failed");
  if (row.status == "failed") row.error = summary.value("message", store->status());
  const json best = summary.value("best", json::object());
  row.best_speedup = number<double>(best, "speedup");
  row.best_over_seed = number<double>(best, "speedup_over_seed");
  row.evaluations = number<int64_t>(summary, "evaluations");
  row.failures = number<int64_t>(summary, "failures");
  row.agent_calls = number<int64_t>(summary, "agent_calls");
  row.tokens = number<int64_t>(summary, "tokens");
  row.dollars = number<double>(summary, "dollars");
  row.wall_s = number<double>(summary, "wall_seconds");
  double gpu_seconds = 0;
  for (const auto& e : store->evaluations(false)) gpu_seconds += e.result.run_seconds;
  row.gpu_s = gpu_seconds;
  row.started_at = store->run_info().value("started_at", "");
  std::error_code ec;
  const auto written = fs::last_write_time(dir / "summary.json", ec);
  if (!ec)
    row.finished_at = utc_time(std::chrono::system_clock::to_time_t(
        std::chrono::time_point_cast<std::chrono::system_clock::duration>(written - fs::file_time_type::clock::now() +
                                                                          std::chrono::system_clock::now())));
  return row;
}

}  // namespace kmcts::detail
