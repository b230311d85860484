#include "search/resume.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "search/canonical.hpp"
#include "search/event_replayer.hpp"
#include "search/recorded_config.hpp"
#include "search/memory_archive.hpp"
#include "search/run_lock.hpp"

namespace kmcts {

nlohmann::json Coordinator::resume() {
  State& s = *state_;
  VariantGraph& g = graph_;
  auto events = s.store.events();
  if (events.empty()) return run();  // killed before the seed was recorded: nothing to continue
  // The run's clock goes on from its last recorded event: its wall time (events, summary) is
  // that of every process that worked on it, less what a killed one did after its last event.
  s.elapsed_before = events.back().time_s;
  s.started = std::chrono::steady_clock::now();
  s.writer.set_muted(true);  // everything re-applied below is already stored
  s.replaying = true;
  detail::EventReplayer replayer(s, g, s.store);
  for (const auto& e : events) {
    std::string mismatch = replayer.apply(e);
    if (!mismatch.empty()) {
      s.writer.set_muted(false);
      throw RunError(fmt::format("cannot resume {}: event {} ({}): {}", s.store.dir().string(), e.seq, e.kind, mismatch));
    }
  }
  s.writer.set_muted(false);
  s.replaying = false;
  s.rewrite_all(g);  // the stored statistics may predate the last recorded events
  s.flush(g);
  auto open_trials = replayer.open_agent_trials();
  std::vector<int> lost;  // variants created whose measurement never came back
  for (int n = 0; n < g.size(); ++n)
    if (g.node(n).status == NodeStatus::pending) lost.push_back(n);
  s.event("resumed", {{"events", events.size()}, {"agent_calls_redone", open_trials.size()}, {"evaluations_redone", lost},
                      {"budget", s.settings.budget}, {"workers", s.settings.workers}});
  s.writer.end_batch();
  // The agent calls the run had made but not heard back from are made again, each as it was
  // (same trial, same call of its node, same spare plan), so the search goes on as it would have.
  for (const Selection& sel : open_trials) detail::resume_agents(s, g, sel);
  for (int n : lost) {
    if (n == 0) s.in_flight = std::max(s.in_flight, 1);  // the seed's evaluation is no trial
    detail::start_evaluation(s, replayer.selection_of(n), n, s.source_of(n), /*count=*/false);
  }
  return loop(g.node(0).status != NodeStatus::pending);
}

namespace {

// A completed run extended to more evaluations must have room under its other limits, or it
// would stop again at once: the limit it reached is named, with the --set that raises it.
void check_limits_left(const std::filesystem::path& run_dir, const nlohmann::json& summary, const Config& config) {
  struct Limit {
    const char* key;
    const char* what;
    double spent;
  };
  const Limit limits[] = {
      {"search.max_wall_s", "wall-clock budget", summary.value("wall_seconds", 0.0)},
      {"search.max_agent_calls", "agent-call budget", summary.value("agent_calls", 0.0)},
      {"search.max_tokens", "token budget", summary.value("tokens", 0.0)},
      {"search.max_dollars", "dollar budget", summary.value("dollars", 0.0)},
  };
  for (const Limit& l : limits) {
    const double limit = std::string(l.key) == "search.max_wall_s" || std::string(l.key) == "search.max_dollars"
                             ? config.get_double(l.key)
                             : static_cast<double>(config.get_int(l.key));
    if (limit > 0 && l.spent >= limit)
      throw InputError(fmt::format("run directory '{}' has used its {} ({} = {:g}; {:.4g} spent): extending it needs a "
                                   "larger one too, e.g. --set {}={:g}",
                                   run_dir.string(), l.what, l.key, limit, l.spent, l.key, 2 * limit));
  }
}

}  // namespace

nlohmann::json resume_search(const ResumeRequest& request) {
  // Nothing is written into a folder that is not a run (not even the lock).
  if (!std::filesystem::is_directory(request.run_dir))
    throw InputError(fmt::format("run directory '{}' does not exist", request.run_dir.string()));
  if (!std::filesystem::exists(request.run_dir / "run.sqlite"))
    throw InputError(fmt::format("'{}' is not a kmcts run directory (it has no run.sqlite)", request.run_dir.string()));
  FolderLock lock(request.run_dir);  // the run may still be going in another process
  auto store = RunStore::open(request.run_dir);
  // A run stopped by Ctrl-C or SIGTERM goes on from where it stopped; a completed one only when
  // a larger budget extends it.
  const std::string status = store->status();
  const int done = store->summary().value_or(nlohmann::json::object()).value("evaluations", 0);
  const bool extends = status == "completed" && request.budget && *request.budget > done;
  if (status != "running" && status != "interrupted" && !extends)
    throw InputError(fmt::format("run directory '{}' already finished (status {}){}", request.run_dir.string(), status,
                                 status == "completed" ? fmt::format("; `--budget N` above its {} evaluations extends it", done)
                                                       : std::string("; nothing to resume")));
  Config config;
  config.merge(store->config(), (request.run_dir / "config.json").string());
  fix_recorded_config(config, store->config());  // before --budget: the horizon stays the run's
  if (request.budget) config.set_value("search.budget", *request.budget, "--budget");
  if (request.workers) config.set_value("search.workers", *request.workers, "--workers");
  for (const auto& [key, value] : request.overrides) config.set_value(key, value, "resume");
  for (const std::string& s : request.sets) {
    const std::string key = s.substr(0, s.find('='));
    if (key != "search.max_wall_s" && key != "search.max_agent_calls" && key != "search.max_tokens" &&
        key != "search.max_dollars")
      throw InputError(fmt::format("resume --set {}: only the limits a run is extended past can change (search.max_wall_s, "
                                   "search.max_agent_calls, search.max_tokens, search.max_dollars); the rest of the "
                                   "config stays as the run recorded it",
                                   key));
    config.set(s);
  }
  if (extends) check_limits_left(request.run_dir, *store->summary(), config);
  if (request.budget || request.workers || !request.overrides.empty() || !request.sets.empty())
    store->update_config(config.to_json());
  // Runs since KernelBench-format problems record the path they loaded (a file or a folder).
  const nlohmann::json info = store->run_info();
  std::filesystem::path problem_dir = info.value("problem_path", info.value("problem_dir", ""));
  Problem problem = load_problem(problem_dir);
  auto nodes = store->nodes();
  if (!nodes.empty() && nodes[0].hash != canonical_hash(problem.seed_source))
    throw InputError(fmt::format("{}: the seed kernel changed since the run started; it cannot be resumed", problem_dir.string()));
  SearchSettings settings = SearchSettings::from_config(config);
  settings.progress = request.progress;
  Coordinator coordinator(problem, settings, SearchParts::from_config(problem, config), *store);
  // Only once everything above held: a resume refused on the way leaves an ended run as it was.
  if (status != "running") store->reopen();
  nlohmann::json summary = coordinator.resume();
  // Its improvements into the optimisation archive (those already there are skipped).
  if (const std::string memory = record_run_improvements(*store, problem, config); !memory.empty()) {
    summary["memory"] = memory;
    if (settings.progress) fmt::print(stderr, "{}\n", memory);
  }
  return summary;
}

}  // namespace kmcts
