#pragma once
// How many CPUs this process may use: the CPUs of its affinity mask, capped by a cgroup CPU quota
// (cgroup v2 cpu.max, or v1 cpu.cfs_quota_us / cpu.cfs_period_us). std::thread::hardware_concurrency
// counts the host's online CPUs, so a 2-CPU container on a 64-core host would size its pools for 64.

#include <optional>
#include <string>

namespace kmcts {

struct CpuBudget {
  int online = 0;                 // the host's online CPUs (hardware_concurrency)
  int affinity = 0;               // CPUs in this process's affinity mask (sched_getaffinity)
  std::optional<double> quota;    // CPUs' worth of the cgroup's quota, if it sets one
  int usable = 1;                 // min(affinity, ceil(quota)), at least 1
  std::string describe() const;   // "2 usable (affinity 2 of 64 online; cgroup quota 1.5 CPUs)"
};

// Read once per process; later calls return the first answer.
const CpuBudget& cpu_budget();
// cpu_budget().usable.
int usable_cpus();

// The quota a cgroup v2 cpu.max text sets ("150000 100000" -> 1.5; "max 100000" -> none), or
// v1's two files' contents (quota "-1" -> none). Malformed text -> none.
std::optional<double> parse_cpu_max(const std::string& text);
std::optional<double> parse_cfs_quota(const std::string& quota_us, const std::string& period_us);

// The tightest CPU quota (in CPUs) set for the cgroup that `proc_self_cgroup` (the text of
// /proc/self/cgroup) names or any cgroup above it, read under `root` (/sys/fs/cgroup): v2's
// cpu.max, else v1's cpu.cfs_quota_us over cpu.cfs_period_us under root/cpu or root/cpu,cpuacct.
std::optional<double> cgroup_quota(const std::string& proc_self_cgroup, const std::string& root);

// The budget from these readings (affinity 0 = unknown: online is used).
CpuBudget make_cpu_budget(int online, int affinity, std::optional<double> quota);

}  // namespace kmcts
