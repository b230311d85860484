#pragma once
// Wall-clock times as text, in UTC (run stores, run folder names, grid indexes), and the
// CPU time of the calling thread.
#include <ctime>
#include <string>

namespace kmcts {

constexpr const char* kIso8601 = "%Y-%m-%dT%H:%M:%SZ";

/// `t` formatted by strftime's `format`, in UTC.
std::string utc_time(std::time_t t, const char* format = kIso8601);

/// Now, formatted by strftime's `format`, in UTC (default: 2026-11-30T18:20:05Z).
std::string utc_now(const char* format = kIso8601);

/// CPU time the calling thread has used, in seconds (its own cost, whatever else the machine
/// runs). A system call: not for every event of a hot loop.
double thread_cpu_seconds();

/// The calling thread's CPU time so far, split into user space and kernel (system calls, and
/// the wake-ups and context switches they cost), in seconds; the split is the kernel's sampling.
struct CpuSplit {
  double user = 0, system = 0;
};
CpuSplit thread_cpu_split();

}  // namespace kmcts
