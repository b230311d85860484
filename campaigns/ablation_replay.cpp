// `kmcts ablate --replay-only`: every finished run of a grid re-run offline and compared.
#include <fmt/format.h>

#include <cstdio>
#include <map>
#include <mutex>
#include <thread>

#include "campaigns/ablation_folder.hpp"
#include "campaigns/ablation_runner.hpp"
#include "campaigns/run_pool.hpp"
#include "core/error.hpp"
#include "core/hash.hpp"
#include "search/replay.hpp"
#include "search/run_lock.hpp"
#include "search/run_search.hpp"
#include "search/run_store.hpp"
#include "core/cpus.hpp"

namespace kmcts {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// What the re-run asked for that the run did not record: a measurement (the replay evaluator
// answered "replay miss") or an LLM reply (the cassette had none). "" when nothing is missing.
std::string first_miss(const RunStore& rerun, const RunStore& original) {
  std::map<int, std::string> recorded_verdict;
  for (const auto& e : original.evaluations(false)) recorded_verdict[e.node] = to_string(e.result.verdict);
  const std::vector<NodeRecord> nodes = rerun.nodes();
  for (const auto& e : rerun.evaluations(false)) {
    const bool missed = is_replay_miss(e.result);
    const auto recorded = recorded_verdict.find(e.node);
    if (missed && (recorded == recorded_verdict.end() || recorded->second != "infra_error"))
      return fmt::format("no recorded measurement of source {} (node {})", nodes.at(static_cast<size_t>(e.node)).hash, e.node);
  }
  for (const auto& e : rerun.events())
    if (e.kind == "agent_failed" && e.payload.value("error", "").find("has no reply for this request") != std::string::npos)
      return fmt::format("no recorded LLM reply: {} (trial {}, node {})", e.payload.value("error", ""),
                         e.payload.value("trial", -1), e.payload.value("node", -1));
  return "";
}

struct Verdict3 {
  std::string kind;  // reproduced | differs | miss
  std::string what;
};

// What the original took of the optimisation archive, for the re-run to ask the same prompts.
nlohmann::json memory_of(const nlohmann::json& run_info) {
  nlohmann::json out = nlohmann::json::object();
  for (const char* key : {"memory_prompt", "memory_candidates", "memory_k"})
    if (run_info.contains(key)) out[key] = run_info[key];
  return out;
}

Verdict3 check_run(const AblationGrid& g, const AblationRunSpec& run, const fs::path& out, const std::string& command_line) {
  const fs::path dir = detail::run_dir_of(out, run);
  const fs::path scratch = out / "replay-check" / run.run_id;
  fs::remove_all(scratch);
  auto original = RunStore::open(dir);
  try {
    run_search({g.problems[run.problem].path, offline_replay_config(original->config(), dir), scratch, false, command_line,
                memory_of(original->run_info())});
  } catch (const std::exception& e) {
    return {"differs", fmt::format("the re-run stopped: {}", e.what())};
  }
  auto rerun = RunStore::open(scratch);
  const std::string difference = compare_runs(*rerun, *original);
  if (difference.empty()) {
    const size_t nodes = rerun->nodes().size(), events = rerun->events().size();
    rerun.reset();
    fs::remove_all(scratch);
    return {"reproduced", fmt::format("{} nodes, {} events", nodes, events)};
  }
  if (std::string miss = first_miss(*rerun, *original); !miss.empty()) return {"miss", miss};
  return {"differs", difference + fmt::format(" (re-run kept in {})", scratch.string())};
}

}  // namespace

AblationOutcome replay_ablation(const AblationRequest& r) {
  const AblationGrid g = load_ablation_grid(r.grid_file);
  AblationOutcome outcome;
  outcome.replay_only = true;  // ok only if every run was checked (a Ctrl-C leaves some unchecked)
  const fs::path out = detail::ablation_out(g, r.out);
  outcome.out = out;
  if (!fs::exists(out / "grid.json"))
    throw InputError(fmt::format("{} holds no grid: run `kmcts ablate {}` first", out.string(), r.grid_file.string()));
  FolderLock lock(out);
  detail::check_or_record_grid(out, g);
  outcome.total = g.runs.size();
  std::vector<AblationRunSpec> finished;
  for (const AblationRunSpec& run : g.runs) {
    if (detail::run_status(detail::run_dir_of(out, run)) == "completed") {
      finished.push_back(run);
      continue;
    }
    ++outcome.unfinished;
    fmt::print("unfinished  {}  (not checked: the run has not completed)\n", run.run_id);
  }
  outcome.done = finished.size();
  std::mutex mutex;
  const size_t jobs = std::max<size_t>(1, r.jobs.value_or(static_cast<size_t>(usable_cpus())));
  run_pool(finished.size(), jobs, [&](size_t i, size_t) {
    const Verdict3 v = check_run(g, finished[i], out, r.command_line);
    std::lock_guard lock(mutex);
    (v.kind == "reproduced" ? outcome.reproduced : v.kind == "miss" ? outcome.missed : outcome.differ)++;
    fmt::print("{:<11} {}  ({})\n", v.kind, finished[i].run_id, v.what);
    std::fflush(stdout);
  });
  if (fs::exists(out / "replay-check") && fs::is_empty(out / "replay-check")) fs::remove(out / "replay-check");
  return outcome;
}

}  // namespace kmcts
