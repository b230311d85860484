#include "search/resume.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "search/canonical.hpp"
#include "search/event_replayer.hpp"
#include "search/run_lock.hpp"

namespace kmcts {

nlohmann::json Coordinator::resume() {
  State& s = *state_;
  VariantGraph& g = graph_;
  auto events = s.store.events();
  if (events.empty()) return run();  // killed before the seed was recorded: nothing to continue
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
  s.event("resumed", {{"events", events.size()}, {"cancelled_agent_calls", open_trials.size()}, {"evaluations_redone", lost},
                      {"budget", s.settings.budget}, {"workers", s.settings.workers}});
  for (const Selection& sel : open_trials) {
    detail::AgentDone cancelled;
    cancelled.selection = sel;
    cancelled.error = "cancelled: the run stopped before the agents answered";
    detail::apply_agent(s, g, cancelled);
  }
  s.writer.end_batch();
  for (int n : lost) {
    if (n == 0) s.in_flight = std::max(s.in_flight, 1);  // the seed's evaluation is no trial
    detail::start_evaluation(s, replayer.selection_of(n), n, s.source_of(n), /*count=*/false);
  }
  return loop(g.node(0).status != NodeStatus::pending);
}

nlohmann::json resume_search(const ResumeRequest& request) {
  FolderLock lock(request.run_dir);  // the run may still be going in another process
  auto store = RunStore::open(request.run_dir);
  if (store->status() != "running")
    throw InputError(fmt::format("run directory '{}' already finished (status {}); nothing to resume",
                                 request.run_dir.string(), store->status()));
  Config config;
  config.merge(store->config(), (request.run_dir / "config.json").string());
  if (request.budget) config.set_value("search.budget", *request.budget, "--budget");
  if (request.workers) config.set_value("search.workers", *request.workers, "--workers");
  for (const auto& [key, value] : request.overrides) config.set_value(key, value, "resume");
  if (request.budget || request.workers || !request.overrides.empty()) store->update_config(config.to_json());
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
  return coordinator.resume();
}

}  // namespace kmcts
