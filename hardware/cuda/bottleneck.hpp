#pragma once
// A one-line bottleneck verdict from a kernel's Nsight Compute counters (hw_counters.hpp), and
// where a call sits on the roofline (issue 30, item 2). The rule, in order:
//   - memory-bound: DRAM throughput at least 60% of its peak and at least the SM's;
//   - compute-bound: SM throughput at least 60% of its peak;
//   - latency/occupancy-bound: neither near its peak; the verdict names the achieved occupancy
//     and the largest warp stall reason, what to look at next.
// 60% is where Nsight Compute's own speed-of-light section starts to call a unit the limiter.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kmcts::cuda {

struct Bottleneck {
  std::string kind;  // "memory-bound", "compute-bound", "latency/occupancy-bound"
  std::string line;  // the verdict with its figures
};

/// The verdict for one kernel of parse_ncu_csv()'s "kernels" (keys of counter_metrics());
/// nullopt when neither throughput was measured.
std::optional<Bottleneck> bottleneck_of(const nlohmann::json& kernel);

/// Where a call of `flops` FLOPs moving `bytes` bytes sits against peaks: its arithmetic
/// intensity (FLOP per byte) against the ridge point (peak FLOP/s over peak bytes/s), and which
/// roof bounds it. Empty when a count or a peak is unknown (0).
std::string roofline_position(double flops, double bytes, double peak_flops_per_s, double peak_bytes_per_s);

}  // namespace kmcts::cuda
