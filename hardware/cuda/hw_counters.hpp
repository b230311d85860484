#pragma once
// A short, curated list of hardware counters for the agents (why is this variant slow?),
// read by Nsight Compute (`ncu`) in a separate worker run that never feeds the timing:
// DRAM and SM throughput, achieved occupancy, L2 hit rate, and the main warp stall reasons.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kmcts::cuda {

struct CounterMetric {
  const char* metric;  // ncu's metric name
  const char* key;     // the short name results use
};

/// The metrics asked of ncu, in report order.
const std::vector<CounterMetric>& counter_metrics();
/// Their names comma-separated, as ncu's --metrics takes them.
std::string counter_metric_list();

/// ncu's --csv output (one row per kernel launch and metric) as
/// {"kernels": [{"name": ..., "dram_throughput_pct": ..., ...}]}, launches of the same kernel
/// averaged; the worker's own kernels (kmcts_gpu_checks::) left out. Throws std::runtime_error
/// when the text has no metric table.
nlohmann::json parse_ncu_csv(const std::string& csv);

}  // namespace kmcts::cuda
