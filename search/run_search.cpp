#include "search/run_search.hpp"

#include <unistd.h>

#include <chrono>
#include <ctime>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/problem.hpp"
#include "search/coordinator.hpp"
#include "search/run_lock.hpp"
#include "search/run_store.hpp"

namespace kmcts {
namespace {


std::string host_name() {
  char buffer[256] = {0};
  gethostname(buffer, sizeof buffer - 1);
  return buffer;
}

}  // namespace

nlohmann::json run_search(const RunRequest& request) {
  Problem problem = load_problem(request.problem_dir);
  SearchSettings settings = SearchSettings::from_config(request.config);
  settings.progress = request.progress;
  SearchParts parts = SearchParts::from_config(problem, request.config);  // unknown names fail here
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
  auto store = RunStore::create(run_dir, run_info, request.config.to_json());
  FolderLock lock(run_dir);
  Coordinator coordinator(problem, settings, std::move(parts), *store);
  return coordinator.run();
}

}  // namespace kmcts
