// The coordinator's loop: dispatch work into free slots, apply completions in order.
#include <algorithm>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "search/canonical.hpp"
#include "search/coordinator_state.hpp"

namespace kmcts {
namespace {

using namespace detail;
using detail::AgentDone;
using detail::EvalDone;
using State = Coordinator::State;

ProgressState progress_of(const State& s, const VariantGraph& g) {
  ProgressState p{s.evaluations_done, s.settings.budget, 0, -1, s.failures, s.in_flight, s.elapsed()};
  p.agent_calls = s.agent_calls_done;
  p.agent_failures = s.agent_failures;
  p.tokens = s.usage.prompt_tokens + s.usage.completion_tokens;
  p.dollars = s.usage.dollars;
  const AgentActivity live = agent_activity();
  p.llm_requests = live.llm_requests, p.llm_reply_bytes = live.llm_reply_bytes;
  if (s.best_node >= 0) p.best_speedup = g.node(s.best_node).speedup, p.best_node = s.best_node;
  // At this process's pace so far (a resumed run's earlier processes ran at theirs).
  const int done_here = s.evaluations_done - s.evaluations_at_process_start;
  const double seconds_here = s.elapsed() - s.elapsed_before;
  if (done_here > 0 && seconds_here > 0)
    p.eta_s = std::max(0, s.settings.budget - s.evaluations_done) * seconds_here / done_here;
  return p;
}

std::atomic<bool> g_stop{false};
std::atomic<bool> g_suspend{false};


int64_t trial_of(const detail::Completion& c) {
  return std::visit([](const auto& done) { return done->selection.trial; }, c);
}

// Why the run fails for its agents' failures ("" if it does not): past the minimum of finished
// calls, the failed share reached; or at the end, every call failed.
std::string agent_failure(const State& s, bool at_end) {
  const int done = s.agent_calls_done, failed = s.agent_failures;
  if (done == 0 || failed == 0) return "";
  const bool share = done >= s.settings.agent_failure_min_calls &&
                     failed >= s.settings.agent_failure_share * static_cast<double>(done);
  if (!share && !(at_end && failed == done)) return "";
  return fmt::format("{} of {} agent calls failed; the first, {} (every one is an agent_failed event)", failed, done,
                     s.first_agent_failure);
}

// The first budget reached stops the search (the evaluation budget is enforced at dispatch).
std::string budget_reached(const State& s) {
  const SearchSettings& b = s.settings;
  if (b.max_wall_s > 0 && s.elapsed() >= b.max_wall_s) return "wall-clock budget reached";
  if (b.max_agent_calls > 0 && s.agent_calls_total >= b.max_agent_calls) return "agent-call budget reached";
  if (b.max_tokens > 0 && s.usage.prompt_tokens + s.usage.completion_tokens >= b.max_tokens) return "token budget reached";
  if (b.max_dollars > 0 && s.usage.dollars >= b.max_dollars) return "dollar budget reached";
  if (s.agent_calls_total >= 20 * b.budget) return "agent-call cap reached (agents keep proposing known variants)";
  return "";
}

// The run stays "running" in the store: `kmcts resume` takes it from its event log.
nlohmann::json suspend(State& s, const VariantGraph& g) {
  s.flush(g);
  s.writer.sync();
  s.progress.finish();
  return summarize(s, g, "suspended", "stopped without finishing: the evaluations can no longer run (every MPI worker "
                                      "lost); `kmcts resume` continues the run");
}

}  // namespace

namespace detail {

nlohmann::json summarize(const Coordinator::State& s, const VariantGraph& g, const std::string& status, const std::string& message) {
  nlohmann::json j = {{"status", status},
                      {"problem", s.problem.name},
                      {"run_dir", s.store.dir().string()},
                      {"budget", s.settings.budget},
                      {"evaluations", s.evaluations_done},
                      {"failures", s.failures},
                      {"failures_by_verdict", s.failures_by_verdict},
                      {"nodes", g.size()},
                      {"edges", g.edge_count()},
                      {"transpositions", s.transpositions},
                      {"agent_calls", s.agent_calls_total},
                      {"agent_failures", s.agent_failures},
                      {"tokens", s.usage.prompt_tokens + s.usage.completion_tokens},
                      {"dollars", s.usage.dollars},
                      {"llm_requests", s.usage.calls},
                      {"llm_retries", s.usage.retries},
                      {"cached_tokens", s.usage.cached_tokens},
                      {"reasoning_tokens", s.usage.reasoning_tokens},
                      {"wall_seconds", s.elapsed()}};
  if (!message.empty()) j["message"] = message;
  if (g.size() == 0) return j;
  const NodeRecord& root = g.node(0);
  if (root.status == NodeStatus::ok) j["seed"] = {{"node", 0}, {"median_ns", root.median_ns}, {"speedup", root.speedup}};
  int best = -1;
  for (int i = 0; i < g.size(); ++i)
    if (g.node(i).status == NodeStatus::ok && (best == -1 || g.node(i).speedup > g.node(best).speedup)) best = i;
  if (best >= 0) {
    const NodeRecord& b = g.node(best);
    nlohmann::json history = nlohmann::json::array();
    for (int p : g.tree_path(best))
      if (!g.node(p).plan.empty()) history.push_back(g.node(p).plan);
    j["best"] = {{"node", best}, {"hash", b.hash}, {"speedup", b.speedup}, {"median_ns", b.median_ns},
                 {"plan_history", history}, {"meta", b.meta}};
    // Both speedups were measured against the reference in the same worker process, so
    // their ratio cancels drift between the two runs better than a ratio of raw times.
    if (root.status == NodeStatus::ok && root.speedup > 0) j["best"]["speedup_over_seed"] = b.speedup / root.speedup;
  }
  return j;
}

}  // namespace detail

void Coordinator::request_stop() { g_stop.store(true); }
void Coordinator::request_suspend() { g_suspend.store(true); }

nlohmann::json Coordinator::run() {
  State& s = *state_;
  VariantGraph& g = graph_;
  g_stop.store(false);
  add_root(s, g);
  return loop(false);
}

nlohmann::json Coordinator::loop(bool seed_done) {
  State& s = *state_;
  VariantGraph& g = graph_;
  const bool lockstep = s.settings.deterministic;
  g.reserve(s.settings.budget + 1);  // about one node per evaluation, the seed's included
  const double cpu_start = thread_cpu_seconds();
  const CpuSplit split_start = thread_cpu_split();
  // Waiting for completions: how often the queue was empty, how often that put the coordinator
  // to sleep, and the CPU time the waits cost (sleeping and waking up). Each clock read is a
  // system call, so one wait in kWaitSample is timed and stands for the others.
  constexpr long kWaitSample = 8;
  long waits = 0, sleeps = 0;
  double wait_cpu = 0;
  std::vector<detail::Completion> held;  // completions not yet applied
  std::string stop_reason;
  bool agents_failed = false;  // the agent-failure rule stopped the run: it fails, whatever came in after
  // At every tenth of the evaluations this loop has left: the events so far, the coordinator's
  // CPU seconds, the wall seconds and its sleeps. A benchmark divides the stretches between
  // marks, so that the cost per event can be set against what the host did meanwhile.
  nlohmann::json cpu_marks = nlohmann::json::array();
  const int evaluations_at_start = s.evaluations_done;
  s.evaluations_at_process_start = evaluations_at_start;
  int marks_done = 0;
  auto mark = [&] { cpu_marks.push_back({s.seq, thread_cpu_seconds() - cpu_start, s.elapsed(), sleeps}); };
  auto mark_due = [&] {
    return marks_done < 10 && 10L * (s.evaluations_done - evaluations_at_start) >=
                                  static_cast<long>(marks_done + 1) * std::max(1, s.settings.budget - evaluations_at_start);
  };
  mark();
  while (true) {
    s.writer.check();  // a failed write stops the run here, with what was committed kept
    if (seed_done && stop_reason.empty()) {
      stop_reason = g_stop.load() ? "interrupted" : budget_reached(s);
      if (stop_reason.empty() && !(stop_reason = agent_failure(s, false)).empty()) agents_failed = true;
    }
    // Late binding: select only for a free slot. In lockstep, a whole wave at once, and
    // only when the previous wave is fully applied.
    int dispatched = 0;
    while (seed_done && stop_reason.empty() && s.evaluations_started + s.agent_stage < s.settings.budget &&
           (lockstep ? s.in_flight == 0 || (dispatched > 0 && dispatched < s.settings.wave_size)
                     : s.in_flight < s.settings.workers && s.agent_stage < s.settings.agent_slots)) {
      auto selection = s.parts.strategy->next(g);
      if (!selection) break;
      start_agents(s, g, *selection);
      ++dispatched;
    }
    if (s.in_flight == 0) break;
    s.progress.update(progress_of(s, g));
    s.writer.end_batch();
    auto completion = s.completions.try_pop();
    if (!completion) {
      const bool timed = waits++ % kWaitSample == 0;
      const double w0 = timed ? thread_cpu_seconds() : 0.0;
      completion = s.completions.pop_for(std::chrono::milliseconds(250), &sleeps);
      if (timed) wait_cpu += kWaitSample * (thread_cpu_seconds() - w0);
    }
    if (g_suspend.load()) return suspend(s, g);  // what came with the suspension is not applied
    if (completion) {
      auto apply = [&s, &g](detail::Completion& c) {
        if (auto* a = std::get_if<std::unique_ptr<AgentDone>>(&c)) apply_agent(s, g, **a);
        if (auto* e = std::get_if<std::unique_ptr<EvalDone>>(&c)) apply_evaluation(s, g, **e);
      };
      if (lockstep) held.push_back(std::move(*completion));
      // Lockstep applies once every outstanding job has reported, in request order; otherwise
      // each completion is applied as it arrives.
      if (!lockstep || static_cast<int>(held.size()) == s.in_flight) {
        if (!lockstep) apply(*completion);
        std::stable_sort(held.begin(), held.end(), [](const auto& a, const auto& b) { return trial_of(a) < trial_of(b); });
        for (auto& c : held) apply(c);
        held.clear();
        if (s.elapsed() - s.last_flush >= s.settings.store_flush_s) s.flush(g);
        s.writer.end_batch();  // the writes of these completions commit together
        for (; mark_due(); ++marks_done) mark();
      }
    }
    if (!seed_done && g.node(0).status != NodeStatus::pending) {
      seed_done = true;
      if (g.node(0).status == NodeStatus::failed) {
        s.flush(g);
        s.progress.finish();
        auto summary = summarize(s, g, "failed", "the seed kernel failed: " + s.result_of(0)->message);
        s.writer.write([summary](RunStore& st) { st.finish(summary); });
        s.writer.sync();
        return summary;
      }
    }
  }
  s.progress.update(progress_of(s, g));
  s.progress.finish();
  std::string status = stop_reason == "interrupted" ? "interrupted" : "completed";
  // Agents that failed (beyond the share, or every one of them) fail the run, whatever else
  // stopped it: its summary names them, not the budget or an exhausted space.
  if (status != "interrupted") {
    if (std::string failed = agent_failure(s, true); !failed.empty()) status = "failed", stop_reason = std::move(failed);
    else if (agents_failed) status = "failed";  // stop_reason keeps the count at the stop
  }
  if (stop_reason.empty() && s.evaluations_started < s.settings.budget) stop_reason = "search space exhausted before the budget";
  s.flush(g);
  // The writer's backlog first (at simulation rates it can be seconds of writes): its CPU and
  // how long the search waited for it go into the summary.
  const double drain_start = s.elapsed();
  s.writer.sync();
  auto summary = summarize(s, g, status, stop_reason);
  summary["store_writer_cpu_seconds"] = s.writer.cpu_seconds();
  summary["store_writer_drain_seconds"] = s.elapsed() - drain_start;
  summary["coordinator_cpu_seconds"] = thread_cpu_seconds() - cpu_start;
  summary["coordinator_system_cpu_seconds"] = thread_cpu_split().system - split_start.system;
  summary["coordinator_sleeps"] = sleeps;
  summary["agent_wakes"] = s.agents.wakes();  // hand-offs that woke a sleeping agent thread
  summary["coordinator_wait_cpu_seconds"] = wait_cpu;
  summary["coordinator_cpu_marks"] = std::move(cpu_marks);
  s.event("finished", {{"status", status}, {"reason", stop_reason}});
  s.writer.write([summary](RunStore& st) { st.finish(summary); });
  s.writer.sync();
  return summary;
}

}  // namespace kmcts
