// Part (b): pipeline utilization. Simulated latencies (agent call, compile, measurement) are
// scaled down in time so a case runs in seconds; sleeping threads cost no CPU, so the scaled
// pipeline behaves like the real one as long as the coordinator's own work per event stays
// small against the scaled intervals. Throughput is read from the evaluation events' times
// over the middle of the run (10% .. 90% of evaluations), which leaves out the ramp-up (the
// first result needs a whole trial) and the drain (no new dispatch once the budget is handed out).
#include <fmt/format.h>

#include "engine/engine_bench.hpp"
#include "search/run_search.hpp"
#include "search/run_store.hpp"

namespace kmcts::bench {
namespace {

struct Case {
  std::string name;
  double agent_min_s, agent_max_s, compile_s, measure_s;  // simulated (unscaled) seconds
  int agent_slots, workers, compile_slots, measure_slots;  // workers = trials in flight
};

// Measurement-bound cases have enough agent slots that agents (and compiles) outpace the
// measurement slots; agent-bound ones have too few agent slots for the agents' latency.
// Agent-bound cases run twice: with search.agent_slots below search.workers (an agent slot
// frees as soon as its call returns) and with them equal (a trial keeps its slot through
// compile and measurement: the conservative default, sequential with one worker).
const std::vector<Case> kCases = {
    {"measure-bound, 1 slot", 1, 20, 2, 0.5, 48, 48, 8, 1},
    {"measure-bound, 2 slots", 1, 20, 2, 0.5, 96, 96, 16, 2},
    {"agent-bound, 1-20 s agents", 1, 20, 2, 0.5, 8, 16, 8, 1},
    {"agent-bound, 10 s agents", 10, 10, 2, 0.5, 8, 16, 8, 1},
    {"agent-bound, 10 s agents, agent slots = workers", 10, 10, 2, 0.5, 8, 8, 8, 1},
};

}  // namespace

nlohmann::json run_pipeline(const PipelineOptions& options, double time_scale, const Scratch& scratch) {
  nlohmann::json rows = nlohmann::json::array();
  std::string table =
      "| case | agent slots | workers (trials) | compile slots | measure slots | agent s | compile s | measure s | "
      "ideal/s | measured/s | measured/ideal | agent calls per evaluation |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  const double k = time_scale;
  for (const Case& c : kCases) {
    fmt::print(stderr, "pipeline (scale {:g}): {} ...\n", k, c.name);
    RunRequest r;
    r.problem_dir = options.problem;
    r.config.set("evaluator.name=synthetic");
    r.config.set("agents.planner=bench_slow_rule");
    r.config.set("agents.coder=bench_slow_rule");
    // Failures would skip measurements and add Debugger calls: every trial is then one
    // agent call, one compile and one measurement, which is what the ideal assumes.
    r.config.set_value("evaluator.synthetic.failure_rate", 0.0, "bench");
    r.config.set_value("bench.coder_min_ms", 1000 * k * c.agent_min_s, "bench");
    r.config.set_value("bench.coder_max_ms", 1000 * k * c.agent_max_s, "bench");
    r.config.set_value("evaluator.synthetic.compile_latency_ms", 1000 * k * c.compile_s, "bench");
    r.config.set_value("evaluator.synthetic.latency_ms", 1000 * k * c.measure_s, "bench");
    r.config.set_value("search.workers", c.workers, "bench");
    r.config.set_value("search.agent_slots", c.agent_slots, "bench");
    r.config.set_value("search.compile_slots", c.compile_slots, "bench");
    r.config.set_value("search.measure_slots", c.measure_slots, "bench");
    r.config.set_value("search.budget", options.evaluations, "bench");
    r.run_dir = scratch.run_dir("pipeline");
    r.progress = false;
    nlohmann::json summary = run_search(r);
    std::vector<double> times;  // real seconds of each evaluation event
    for (const auto& e : RunStore::open(r.run_dir)->events())
      if (e.kind == "evaluation") times.push_back(e.time_s);
    fs::remove_all(r.run_dir);

    const double agent_s = (c.agent_min_s + c.agent_max_s) / 2;
    // The ideal: agent slots over agent latency, or measurement slots over
    // measurement time, whichever is lower (in simulated evaluations per second).
    const double ideal = std::min(c.agent_slots / agent_s, c.measure_slots / c.measure_s);
    double measured = 0;
    if (times.size() >= 10) {
      size_t a = times.size() / 10, b = times.size() * 9 / 10;
      measured = k * static_cast<double>(b - a) / (times[b] - times[a]);  // back to simulated time
    }
    const double whole = k * static_cast<double>(times.size()) / summary.value("wall_seconds", 1.0);
    // An agent call whose variant is already in the graph (two calls in flight proposed the
    // same one) or that proposes nothing ends without an evaluation: it kept an agent slot busy
    // for nothing the ideal counts.
    const double calls_per_eval = summary.value("agent_calls", 0.0) / std::max(1.0, summary.value("evaluations", 0.0));
    table += fmt::format("| {} | {} | {} | {} | {} | {:g}-{:g} | {:g} | {:g} | {:.2f} | {:.2f} | {:.3f} | {:.3f} |\n",
                         c.name, c.agent_slots, c.workers, c.compile_slots, c.measure_slots, c.agent_min_s, c.agent_max_s,
                         c.compile_s, c.measure_s, ideal, measured, measured / ideal, calls_per_eval);
    rows.push_back({{"case", c.name}, {"agent_slots", c.agent_slots}, {"workers", c.workers}, {"compile_slots", c.compile_slots},
                    {"measure_slots", c.measure_slots}, {"agent_s", {c.agent_min_s, c.agent_max_s}},
                    {"compile_s", c.compile_s}, {"measure_s", c.measure_s}, {"ideal_per_s", ideal},
                    {"measured_per_s", measured},
                    {"whole_run_per_s", whole}, {"evaluations", summary.value("evaluations", 0)},
                    {"wall_s", summary.value("wall_seconds", 0.0)}, {"utilization", measured / ideal},
                    {"agent_calls", summary.value("agent_calls", 0)}, {"transpositions", summary.value("transpositions", 0)}});
  }
  return {{"rows", rows}, {"table", table}, {"time_scale", k}};
}

}  // namespace kmcts::bench
