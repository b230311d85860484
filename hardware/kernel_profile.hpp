#pragma once
// The per-kernel profile of a measurement (issue 30, item 1), stored as
// EvalResult::details["kernel_profile"] and shown to the Planner and Coder
// (agents/kernel_profile_text.hpp). Built on the trusted side from the kernel tables the
// CUDA worker sums over its timed samples (hardware/cuda/kernel_table.hpp), for the
// candidate and the reference alike. It is feedback only: the candidate's table comes from
// its own host process, which could report what it likes, so nothing here feeds a verdict.
//
//   {"source": "cupti", "peaks": {"bytes_per_s": B, "flops_per_s": F},
//    "candidate": {"samples": N, "median_ns": T, "launches_per_call": L,
//                  "achieved": {"bytes_per_s": .., "bytes_fraction": .., "flops_per_s": .., "flops_fraction": ..},
//                  "kernels": [{"name": demangled (cut to 160), "calls_per_call": c, "mean_ns": per launch,
//                               "share": of the side's kernel time, "grid": [x,y,z], "block": [x,y,z],
//                               "registers": r, "smem_static": b, "smem_dynamic": b, "local_bytes": b}, ...],
//                  "others": {"calls_per_call": n, "share": s}},
//    "reference": {...}}
//
// Kernels are listed by time, the largest kProfileRows; the rest are summed in "others".
// "achieved" is per call (the problem's bytes and FLOPs over the side's median time) and
// present only where problem.json gives them: CUPTI's records carry no byte or FLOP counts of
// their own, so a per-kernel rate needs Nsight Compute (evaluator.cuda.profile).
#include <string>

#include <nlohmann/json.hpp>

#include "core/problem.hpp"
#include "hardware/cuda/audit.hpp"

namespace kmcts {

inline constexpr size_t kProfileRows = 12;
inline constexpr size_t kProfileNameChars = 160;

/// A kernel's name as people read it: demangled, cut to kProfileNameChars.
std::string readable_kernel_name(const std::string& mangled);

/// The profile from the worker's "kernel_tables" reply; null when it has none. The medians
/// are the sides' measured medians (ns), the peaks those the roofline uses (0 = unknown).
/// Throws std::runtime_error or a json exception on malformed tables.
nlohmann::json kernel_profile(const nlohmann::json& tables, const Problem& problem, double reference_median_ns,
                              double candidate_median_ns, const cuda::Roofline& peaks);

}  // namespace kmcts
