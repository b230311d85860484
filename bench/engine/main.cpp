// kmcts-bench-engine: how much the coordinator costs per event as the graph grows, and how
// close the agent/compile/measurement pipeline comes to its ideal throughput (issue #3).
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"
#include "engine/engine_bench.hpp"

using namespace kmcts;
using namespace kmcts::bench;

int main(int argc, char** argv) {
  CLI::App app{"kmcts engine benchmark: coordinator cost per event, pipeline utilization"};
  ScalingOptions scaling;
  PipelineOptions pipeline;
  std::string out = "bench/results/engine.json", markdown, scratch_parent = fs::temp_directory_path().string();
  bool skip_scaling = false, skip_pipeline = false;
  scaling.problem = pipeline.problem = fs::path(KMCTS_SOURCE_DIR) / "bench/engine/large_space";
  app.add_option("--nodes", scaling.nodes, "Evaluation budgets (graph sizes) of the scaling part")->delimiter(',');
  app.add_option("--workers", scaling.workers, "search.workers of the scaling runs (trials in flight)");
  app.add_option("--set", scaling.settings, "key=value config of the scaling runs (repeatable)");
  app.add_option("--max-seconds", scaling.max_seconds, "Wall-clock cap of one scaling run (search.max_wall_s)");
  app.add_option("--time-scale", pipeline.time_scales, "Real seconds per simulated second in the pipeline part (a list runs each)")
      ->delimiter(',');
  app.add_option("--pipeline-evals", pipeline.evaluations, "Evaluation budget of each pipeline case");
  app.add_option("--problem", scaling.problem, "Problem folder with a large tunable space");
  app.add_option("--out", out, "JSON result file");
  app.add_option("--markdown", markdown, "Markdown result file (default: the JSON path with .md)");
  app.add_option("--scratch", scratch_parent, "Parent folder of the temporary run directories");
  app.add_flag("--skip-scaling", skip_scaling, "Only the pipeline part");
  app.add_flag("--skip-pipeline", skip_pipeline, "Only the scaling part");
  CLI11_PARSE(app, argc, argv);
  pipeline.problem = scaling.problem;

  try {
    Scratch scratch(scratch_parent, "kmcts-bench-engine");
    nlohmann::json result = record("engine", argc, argv);
    std::string md = "# Engine benchmark (" + result["date"].get<std::string>() + ")\n\n" + record_line(result);
    if (!skip_scaling) {
      nlohmann::json s = run_scaling(scaling, scratch);
      result["scaling"] = s;
      md += "## (a) Coordinator cost per applied event\n\n" +
            fmt::format("Synthetic evaluator (instant), rule agents, search.workers={}, budget N evaluations on a 16.7M-point "
                        "space (bench/engine/large_space); one event = one row of the run store's events table. Coordinator "
                        "CPU: CPU time of the coordinator thread over the run's events (its own cost, whatever else the "
                        "machine runs), of it waiting for completions, the rest (handling), and the part of either spent in the kernel "
                        "(system calls: waking agent and pool threads, sleeping and waking), and its CPU per event in the first and the last "
                        "tenth of the evaluations (the JSON has every tenth, with its wall time and sleeps per event: a stretch where "
                        "the host was slow shows there); the wall columns divide each tenth of the run's events by the time it took "
                        "(the whole pipeline, agents and thread hand-offs included). Extra settings: {}.\n\n", scaling.workers,
                        scaling.settings.empty() ? std::string("none (defaults)") : fmt::format("{}", fmt::join(scaling.settings, " "))) +
            s["table"].get<std::string>() + "\n" + s["growth"].get<std::string>() + "\n";
    }
    if (!skip_pipeline) {
      md += "## (b) Pipeline utilization\n\nLatencies in simulated seconds; rates in simulated evaluations/s, "
            "measured over the 10%-90% evaluations. ideal = min(agent slots / agent latency, measure slots / measure "
            "time) (the issue's target is >= 0.95 of it). search.agent_slots bounds the agent calls at once and "
            "search.workers the trials in flight (agent call, compile, measurement); with agent slots = workers a "
            "trial keeps its agent slot until its evaluation is done, so the agents deliver only workers / (agent + "
            "compile + measure). Agent latency is a bench_slow_rule Coder sleep, uniform over the range; no "
            "failures.\n\n";
      for (double scale : pipeline.time_scales) {
        nlohmann::json p = run_pipeline(pipeline, scale, scratch);
        result["pipeline"].push_back(p);
        md += fmt::format("Time scale {:g} (real seconds per simulated second):\n\n", scale) +
              p["table"].get<std::string>() + "\n";
      }
    }
    publish(result, md, out, markdown);
  } catch (const InputError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 2;
  }
  return 0;
}
