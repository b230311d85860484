// Part (a): coordinator cost per applied event. A search on the synthetic evaluator (instant)
// with the rule agents (microseconds) and one worker spends its wall time in the coordinator:
// selection, planner context, graph updates and the run store. The event timestamps in the
// store give the cost per event at every stage of the run, so one run of N evaluations shows
// how the cost grows with the graph, not only its average.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "engine/engine_bench.hpp"
#include "search/run_search.hpp"
#include "search/run_store.hpp"

namespace kmcts::bench {
namespace {

constexpr int kDeciles = 10;

struct Row {
  int budget = 0;
  int nodes = 0, evaluations = 0, events = 0;
  double wall_s = 0;
  double coordinator_cpu_s = 0;  // CPU time of the coordinator thread (its own cost)
  double coordinator_wait_s = 0;  // of it, waiting for completions (polling, sleeps, wake-ups)
  double coordinator_system_s = 0;  // of it, in the kernel (hand-offs: futex wake and wait, context switches)
  long coordinator_sleeps = 0;   // waits for a completion that went to sleep (each costs a wake-up)
  long agent_wakes = 0;          // agent calls handed to a sleeping thread (a system call each)
  double writer_cpu_s = 0;       // the store writer thread's CPU time (SQLite, JSON): its cost per event
  double writer_drain_s = 0;     // how long the run waited at its end for the writer's backlog
  int max_depth = 0;             // deepest node: selection and backup walk paths this long
  std::string stop;
  std::vector<double> us_per_event;  // per decile of the run's events
  // Per tenth of the evaluations, from the coordinator's marks: its CPU and the wall time per
  // event, and its sleeps per event (the same stretch of the same run, so that a stretch where
  // the host was slow can be told from one where the coordinator was).
  std::vector<double> cpu_by_tenth, wall_by_tenth, sleeps_by_tenth;
};

Row run_one(const ScalingOptions& options, const Scratch& scratch, int budget) {
  RunRequest r;
  r.problem_dir = options.problem;
  r.config.set("evaluator.name=synthetic");
  r.config.set_value("search.budget", budget, "bench");
  r.config.set_value("search.workers", options.workers, "bench");
  r.config.set_value("search.max_wall_s", options.max_seconds, "bench");
  for (const auto& kv : options.settings) r.config.set(kv);
  r.run_dir = scratch.run_dir(fmt::format("scaling-{}", budget));
  r.progress = false;
  auto t0 = std::chrono::steady_clock::now();
  nlohmann::json summary = run_search(r);
  Row row;
  row.wall_s = seconds_since(t0);
  row.budget = budget;
  row.nodes = summary.value("nodes", 0);
  row.evaluations = summary.value("evaluations", 0);
  row.stop = summary.value("message", "");
  row.coordinator_cpu_s = summary.value("coordinator_cpu_seconds", 0.0);
  row.coordinator_sleeps = summary.value("coordinator_sleeps", 0L);
  row.agent_wakes = summary.value("agent_wakes", 0L);
  row.coordinator_system_s = summary.value("coordinator_system_cpu_seconds", 0.0);
  row.coordinator_wait_s = summary.value("coordinator_wait_cpu_seconds", 0.0);
  row.writer_cpu_s = summary.value("store_writer_cpu_seconds", 0.0);
  row.writer_drain_s = summary.value("store_writer_drain_seconds", 0.0);
  const nlohmann::json marks = summary.value("coordinator_cpu_marks", nlohmann::json::array());
  for (size_t i = 1; i < marks.size(); ++i) {
    const double events = std::max(1.0, marks[i][0].get<double>() - marks[i - 1][0].get<double>());
    row.cpu_by_tenth.push_back(1e6 * (marks[i][1].get<double>() - marks[i - 1][1].get<double>()) / events);
    row.wall_by_tenth.push_back(1e6 * (marks[i][2].get<double>() - marks[i - 1][2].get<double>()) / events);
    row.sleeps_by_tenth.push_back((marks[i][3].get<double>() - marks[i - 1][3].get<double>()) / events);
  }
  auto store = RunStore::open(r.run_dir);
  for (const auto& n : store->nodes()) row.max_depth = std::max(row.max_depth, n.depth);
  auto events = store->events();
  row.events = static_cast<int>(events.size());
  // Decile d holds events [a, b); its time runs from the event before a to event b - 1.
  for (int d = 0; d < kDeciles && events.size() >= kDeciles; ++d) {
    size_t a = events.size() * d / kDeciles, b = events.size() * (d + 1) / kDeciles;
    double t = events[b - 1].time_s - (a > 0 ? events[a - 1].time_s : 0.0);
    row.us_per_event.push_back(1e6 * t / static_cast<double>(b - a));
  }
  if (row.us_per_event.empty()) row.us_per_event.assign(kDeciles, 0.0);
  fs::remove_all(r.run_dir);
  return row;
}

}  // namespace

nlohmann::json run_scaling(const ScalingOptions& options, const Scratch& scratch) {
  nlohmann::json rows = nlohmann::json::array();
  std::string table =
      "| budget N | nodes | max depth | events | wall s | coordinator CPU us/event | of it waiting | of it handling | of it in the kernel | coordinator sleeps/event | coordinator CPU us/event, first tenth | last tenth | writer CPU us/event | writer drain s | wall us/event (all) | first 10% | 50-60% | last 10% | last/first | stop |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (int n : options.nodes) {
    fmt::print(stderr, "scaling: N = {} ...\n", n);
    Row row = run_one(options, scratch, n);
    const double all = 1e6 * row.wall_s / std::max(1, row.events);
    const double first = row.us_per_event.front(), last = row.us_per_event.back();
    const double cpu = 1e6 * row.coordinator_cpu_s / std::max(1, row.events);
    const double sleeps = static_cast<double>(row.coordinator_sleeps) / std::max(1, row.events);
    const double wait = 1e6 * row.coordinator_wait_s / std::max(1, row.events);
    const double kernel = 1e6 * row.coordinator_system_s / std::max(1, row.events);
    const double cpu_first = row.cpu_by_tenth.empty() ? 0.0 : row.cpu_by_tenth.front();
    const double cpu_last = row.cpu_by_tenth.empty() ? 0.0 : row.cpu_by_tenth.back();
    const double writer = 1e6 * row.writer_cpu_s / std::max(1, row.events);
    table += fmt::format("| {} | {} | {} | {} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.2f} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.0f} | {:.0f} | {:.0f} | {:.0f} | {:.1f}x | {} |\n", n, row.nodes,
                         row.max_depth, row.events, row.wall_s, cpu, wait, cpu - wait, kernel, sleeps, cpu_first, cpu_last, writer, row.writer_drain_s, all, first, row.us_per_event[5], last, last / first,
                         row.stop.empty() ? "budget" : row.stop);
    rows.push_back({{"budget", n}, {"nodes", row.nodes}, {"evaluations", row.evaluations}, {"events", row.events},
                    {"wall_s", row.wall_s}, {"coordinator_cpu_us_per_event", cpu}, {"coordinator_sleeps_per_event", sleeps}, {"coordinator_wait_cpu_us_per_event", wait},
                    {"agent_wakes_per_event", static_cast<double>(row.agent_wakes) / std::max(1, row.events)},
                    {"coordinator_handling_cpu_us_per_event", cpu - wait}, {"writer_cpu_us_per_event", writer}, {"writer_drain_s", row.writer_drain_s}, {"coordinator_system_cpu_us_per_event", kernel}, {"max_depth", row.max_depth}, {"us_per_event_all", all}, {"us_per_event_by_decile", row.us_per_event},
                    {"coordinator_cpu_us_per_event_by_tenth", row.cpu_by_tenth}, {"wall_us_per_event_by_tenth", row.wall_by_tenth},
                    {"coordinator_sleeps_per_event_by_tenth", row.sleeps_by_tenth}, {"stop", row.stop}});
  }
  // Growth: the cost of an event late in the run against the graph size it ran at.
  std::string growth;
  double alpha = 0;
  for (size_t i = 1; i < rows.size(); ++i) {
    double n0 = rows[i - 1]["nodes"], n1 = rows[i]["nodes"];
    double c0 = rows[i - 1]["us_per_event_by_decile"].back(), c1 = rows[i]["us_per_event_by_decile"].back();
    if (n1 <= n0 || c0 <= 0) continue;
    alpha = std::log(c1 / c0) / std::log(n1 / n0);
    growth += fmt::format("- last-10% cost per event grows as N^{:.2f} from {} to {} nodes ({:.0f} -> {:.0f} us)\n",
                          alpha, n0, n1, c0, c1);
  }
  // With c(n) = c_last (n / N_last)^alpha per event and a fixed number of events per node,
  // a run to N costs events_per_node * integral_0^N c(n) dn.
  if (!rows.empty() && alpha > 0) {
    const auto& last = rows.back();
    double n_last = last["nodes"], c_last = last["us_per_event_by_decile"].back();
    double per_node = last["events"].get<double>() / n_last;
    for (double target : {1e4, 1e5})
      if (target > n_last)
        growth += fmt::format("- extrapolated wall time of a {:g}-node run: {:.0f} s\n", target,
                              1e-6 * per_node * c_last * std::pow(target / n_last, alpha) * target / (alpha + 1));
  }
  return {{"rows", rows}, {"table", table}, {"growth", growth}};
}

}  // namespace kmcts::bench
