#include "hardware/cuda/hw_counters.hpp"

#include "core/text.hpp"

#include <map>
#include <sstream>
#include <stdexcept>

namespace kmcts::cuda {

const std::vector<CounterMetric>& counter_metrics() {
  static const std::vector<CounterMetric> kMetrics = {
      {"dram__throughput.avg.pct_of_peak_sustained_elapsed", "dram_throughput_pct"},
      {"sm__throughput.avg.pct_of_peak_sustained_elapsed", "sm_throughput_pct"},
      {"sm__warps_active.avg.pct_of_peak_sustained_active", "achieved_occupancy_pct"},
      {"lts__t_sector_hit_rate.pct", "l2_hit_rate_pct"},
      {"smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct", "stall_long_scoreboard_pct"},
      {"smsp__warp_issue_stalled_barrier_per_warp_active.pct", "stall_barrier_pct"},
      {"smsp__warp_issue_stalled_memory_throttle_per_warp_active.pct", "stall_memory_throttle_pct"},
      {"smsp__warp_issue_stalled_math_pipe_throttle_per_warp_active.pct", "stall_math_throttle_pct"},
      {"smsp__warp_issue_stalled_short_scoreboard_per_warp_active.pct", "stall_short_scoreboard_pct"},
  };
  return kMetrics;
}

std::string counter_metric_list() {
  std::string metrics;
  for (const auto& m : counter_metrics()) {
    if (!metrics.empty()) metrics += ',';
    metrics += m.metric;
  }
  return metrics;
}

namespace {

int column(const std::vector<std::string>& header, const std::string& name) {
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return static_cast<int>(i);
  return -1;
}

}  // namespace

nlohmann::json parse_ncu_csv(const std::string& csv) {
  static constexpr const char* kWorkerKernels = "kmcts_gpu_checks::";
  std::map<std::string, std::string> key_of;
  for (const auto& m : counter_metrics()) key_of[m.metric] = m.key;
  std::istringstream in(csv);
  std::string line;
  std::vector<std::string> header;
  int kernel_col = -1, metric_col = -1, value_col = -1, process_col = -1;
  // kernel -> key -> (sum, count)
  std::map<std::string, std::map<std::string, std::pair<double, int>>> sums;
  std::vector<std::string> order;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind("\"ID\"", 0) == 0) {  // ncu's own lines start with "==PROF==", the table with its header
      header = split_csv_line(line);
      kernel_col = column(header, "Kernel Name"), metric_col = column(header, "Metric Name");
      process_col = column(header, "Process Name");
      value_col = column(header, "Metric Value");
      continue;
    }
    if (kernel_col < 0 || metric_col < 0 || value_col < 0 || line.empty() || line[0] != '"') continue;
    const auto cells = split_csv_line(line);
    if (static_cast<int>(cells.size()) <= std::max({kernel_col, metric_col, value_col})) continue;
    auto key = key_of.find(cells[static_cast<size_t>(metric_col)]);
    if (key == key_of.end()) continue;
    std::string value = cells[static_cast<size_t>(value_col)];
    std::erase(value, ',');  // thousands separators
    double number = 0;
    try {
      number = std::stod(value);
    } catch (const std::exception&) {
      continue;  // "n/a"
    }
    const std::string& kernel = cells[static_cast<size_t>(kernel_col)];
    // The worker's own draws and checks (gpu_check_kernels.hpp) run under the profiler too; the
    // kernels of the worker's process are never the candidate's (its host's are).
    if (kernel.find(kWorkerKernels) != std::string::npos) continue;
    if (process_col >= 0 && static_cast<int>(cells.size()) > process_col &&
        cells[static_cast<size_t>(process_col)].ends_with("-worker"))
      continue;
    if (!sums.count(kernel)) order.push_back(kernel);
    auto& cell = sums[kernel][key->second];
    cell.first += number, cell.second++;
  }
  if (kernel_col < 0 || metric_col < 0 || value_col < 0) throw std::runtime_error("no metric table in ncu's output");
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& name : order) {
    nlohmann::json k = {{"name", name}};
    for (const auto& [key, cell] : sums[name]) k[key] = cell.first / cell.second;
    kernels.push_back(std::move(k));
  }
  return {{"kernels", kernels}};
}

}  // namespace kmcts::cuda
