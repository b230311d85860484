#pragma once
// The engine benchmark's two parts: (a) coordinator cost per applied event as the graph
// grows; (b) pipeline utilization with simulated agent, compile and measurement latencies.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/bench_util.hpp"

namespace kmcts::bench {

struct ScalingOptions {
  std::vector<int> nodes{1000, 3000, 10000};  // evaluation budgets; each new node is one evaluation
  double max_seconds = 150;              // per size: search.max_wall_s, so a slow size still reports
  int workers = 1;                       // trials in flight
  std::vector<std::string> settings;     // extra key=value config of the scaling runs
  fs::path problem;
};

struct PipelineOptions {
  std::vector<double> time_scales{0.01, 0.05};  // real seconds per simulated second, one table each
  int evaluations = 300;     // per case
  fs::path problem;
};

/// Runs the sizes; returns {"rows": [...], "table": markdown}.
nlohmann::json run_scaling(const ScalingOptions& options, const Scratch& scratch);
nlohmann::json run_pipeline(const PipelineOptions& options, double time_scale, const Scratch& scratch);

}  // namespace kmcts::bench
