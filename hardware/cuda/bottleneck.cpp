#include "hardware/cuda/bottleneck.hpp"

#include <fmt/format.h>

namespace kmcts::cuda {
namespace {

constexpr double kNearPeakPct = 60;

// The stall reasons of counter_metrics(), as people say them.
constexpr std::pair<const char*, const char*> kStalls[] = {
    {"stall_long_scoreboard_pct", "waiting on global or local memory (long scoreboard)"},
    {"stall_barrier_pct", "waiting at __syncthreads (barrier)"},
    {"stall_memory_throttle_pct", "memory pipeline full (memory throttle)"},
    {"stall_math_throttle_pct", "math pipe busy (math pipe throttle)"},
    {"stall_short_scoreboard_pct", "waiting on shared memory or special functions (short scoreboard)"},
};

}  // namespace

std::optional<Bottleneck> bottleneck_of(const nlohmann::json& k) {
  if (!k.is_object() || (!k.contains("dram_throughput_pct") && !k.contains("sm_throughput_pct"))) return std::nullopt;
  const double dram = k.value("dram_throughput_pct", 0.0), sm = k.value("sm_throughput_pct", 0.0);
  if (dram >= kNearPeakPct && dram >= sm)
    return Bottleneck{"memory-bound", fmt::format("memory-bound: DRAM at {:.0f}% of its peak (SM {:.0f}%); fewer bytes "
                                                  "moved (fusion, reuse, smaller types) is what speeds it up",
                                                  dram, sm)};
  if (sm >= kNearPeakPct)
    return Bottleneck{"compute-bound", fmt::format("compute-bound: SM at {:.0f}% of its peak (DRAM {:.0f}%); fewer or "
                                                   "cheaper instructions (tensor cores, less index math) speed it up",
                                                   sm, dram)};
  std::string line = fmt::format("latency/occupancy-bound: neither DRAM ({:.0f}%) nor SM ({:.0f}%) is near its peak", dram, sm);
  if (k.contains("achieved_occupancy_pct")) line += fmt::format("; achieved occupancy {:.0f}%", k.value("achieved_occupancy_pct", 0.0));
  const char* worst = nullptr;
  double worst_pct = 0;
  for (const auto& [key, what] : kStalls)
    if (k.contains(key) && k.value(key, 0.0) > worst_pct) worst = what, worst_pct = k.value(key, 0.0);
  if (worst) line += fmt::format("; warps mostly {} ({:.0f}%)", worst, worst_pct);
  return Bottleneck{"latency/occupancy-bound", line};
}

std::string roofline_position(double flops, double bytes, double peak_flops_per_s, double peak_bytes_per_s) {
  if (flops <= 0 || bytes <= 0 || peak_flops_per_s <= 0 || peak_bytes_per_s <= 0) return "";
  const double intensity = flops / bytes, ridge = peak_flops_per_s / peak_bytes_per_s;
  return fmt::format("arithmetic intensity {:.3g} FLOP/byte against the ridge point at {:.3g}: {} roof bounds it",
                     intensity, ridge, intensity < ridge ? "the memory" : "the compute");
}

}  // namespace kmcts::cuda
