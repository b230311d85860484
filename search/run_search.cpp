#include "search/run_search.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/problem.hpp"
#include "search/coordinator.hpp"
#include "search/exploration_schedule.hpp"
#include "search/memory_archive.hpp"
#include "search/run_lock.hpp"
#include "search/run_store.hpp"

namespace kmcts {
namespace {


std::string host_name() {
  char buffer[256] = {0};
  gethostname(buffer, sizeof buffer - 1);
  return buffer;
}

// A new run goes into a folder that does not exist, is empty, or holds only what a run killed
// while being created leaves (its empty sources/ and logs/, a partial store, its lock); never
// into a folder of other files, which the run would mix its own into.
void check_new_run_dir(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return;
  if (!fs::is_directory(dir, ec)) throw InputError(fmt::format("--out {}: is a file, not a folder", dir.string()));
  if (fs::exists(dir / "run.sqlite", ec)) return;  // RunStore::create names it as a run already there
  std::vector<std::string> others;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    const bool leftover = name == "lock" || name.rfind("run.sqlite.partial", 0) == 0 ||
                          ((name == "sources" || name == "logs") && fs::is_empty(entry.path(), ec));
    if (!leftover) others.push_back(name);
  }
  if (others.empty()) return;
  std::sort(others.begin(), others.end());
  if (others.size() > 3) others.resize(3), others.push_back("...");
  throw InputError(fmt::format("--out {}: the folder is not empty and holds no run ({}); give a new or empty folder",
                               dir.string(), fmt::join(others, ", ")));
}

}  // namespace

nlohmann::json run_search(const RunRequest& request) {
  if (!request.run_dir.empty()) check_new_run_dir(request.run_dir);
  Problem problem = load_problem(request.problem_dir);
  Config config = request.config;
  fix_anneal_horizon(config);  // as the run records it: a resumed run keeps the horizon
  SearchSettings settings = SearchSettings::from_config(config);
  settings.progress = request.progress;
  SearchParts parts = SearchParts::from_config(problem, config);  // unknown names fail here
  std::filesystem::path run_dir = request.run_dir;
  if (run_dir.empty())
    run_dir = std::filesystem::path("runs") / fmt::format("{}-{}-s{}", problem.name, utc_now("%Y%m%dT%H%M%SZ"), settings.seed);
  nlohmann::json run_info = {{"problem", problem.name},
                             {"problem_dir", problem.dir.string()},
                             // what load_problem() read: the folder, or a KernelBench-format file
                             {"problem_path", std::filesystem::absolute(request.problem_dir).string()},
                             {"kmcts_version", KMCTS_VERSION_STRING},
                             {"started_at", utc_now()},
                             {"host", host_name()},
                             {"seed", settings.seed},
                             {"command_line", request.command_line},
                             {"evaluator", parts.evaluator->describe()}};
  // What its Planner is shown of the optimisation archive, taken now (memory_for()).
  run_info.update(request.memory ? *request.memory : memory_for(problem, config));
  auto store = RunStore::create(run_dir, run_info, config.to_json());
  FolderLock lock(run_dir);
  Coordinator coordinator(problem, settings, std::move(parts), *store);
  nlohmann::json summary = coordinator.run();
  // Its improvements into the optimisation archive, once the store holds them all.
  if (const std::string memory = record_run_improvements(*store, problem, config); !memory.empty()) {
    summary["memory"] = memory;
    if (settings.progress) fmt::print(stderr, "{}\n", memory);
  }
  return summary;
}

}  // namespace kmcts
