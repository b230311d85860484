#include "core/cpus.hpp"

#include <sched.h>

#include <cerrno>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

namespace kmcts {
namespace {

std::string read_small(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::optional<long long> as_integer(const std::string& text) {
  std::istringstream in(text);
  long long v = 0;
  if (!(in >> v)) return std::nullopt;
  std::string rest;
  if (in >> rest) return std::nullopt;
  return v;
}

// CPUs in this process's affinity mask, in a set sized for the host (a fixed cpu_set_t holds
// 1024 CPUs, and sched_getaffinity refuses a set smaller than the kernel's); 0 = unknown.
int affinity_count() {
  for (int n = CPU_SETSIZE; n <= (1 << 22); n *= 2) {
    cpu_set_t* set = CPU_ALLOC(n);
    if (set == nullptr) return 0;
    const size_t size = CPU_ALLOC_SIZE(n);
    CPU_ZERO_S(size, set);
    const int rc = sched_getaffinity(0, size, set);
    const int error = errno;
    const int count = rc == 0 ? CPU_COUNT_S(size, set) : 0;
    CPU_FREE(set);
    if (rc == 0) return count;
    if (error != EINVAL) return 0;
  }
  return 0;
}

}  // namespace

std::optional<double> cgroup_quota(const std::string& proc_self_cgroup, const std::string& root) {
  // The cgroup this process sits in: v2's "0::/path", else v1's "N:cpu,...:/path".
  std::istringstream in(proc_self_cgroup);
  std::string line, v2_path, v1_path;
  while (std::getline(in, line)) {
    const auto a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (line.compare(0, a, "0") == 0 && controllers.empty()) v2_path = path;
    std::istringstream names(controllers);
    for (std::string c; std::getline(names, c, ',');)
      if (c == "cpu") v1_path = path;
  }
  std::optional<double> q;
  // A quota anywhere up the tree caps this process; the tightest one counts. In a container the
  // path may name the host's hierarchy, so the mount's own root is read too.
  auto tighter = [&](std::optional<double> v) {
    if (v && (!q || *v < *q)) q = v;
  };
  auto up = [](std::string& p) {  // "/a/b" -> "/a" -> "" (the root is read apart)
    const auto slash = p.rfind('/');
    p = slash == std::string::npos || slash == 0 ? std::string() : p.substr(0, slash);
  };
  if (!v2_path.empty()) {
    for (std::string p = v2_path; !p.empty() && p != "/"; up(p)) tighter(parse_cpu_max(read_small(root + p + "/cpu.max")));
    tighter(parse_cpu_max(read_small(root + "/cpu.max")));
  }
  if (!v1_path.empty())
    for (const std::string mount : {root + "/cpu", root + "/cpu,cpuacct"}) {
      for (std::string p = v1_path; !p.empty() && p != "/"; up(p))
        tighter(parse_cfs_quota(read_small(mount + p + "/cpu.cfs_quota_us"), read_small(mount + p + "/cpu.cfs_period_us")));
      tighter(parse_cfs_quota(read_small(mount + "/cpu.cfs_quota_us"), read_small(mount + "/cpu.cfs_period_us")));
    }
  return q;
}

std::optional<double> parse_cpu_max(const std::string& text) {
  std::istringstream in(text);
  std::string quota, period;
  if (!(in >> quota >> period) || quota == "max") return std::nullopt;
  const auto q = as_integer(quota), p = as_integer(period);
  if (!q || !p || *q <= 0 || *p <= 0) return std::nullopt;
  return static_cast<double>(*q) / static_cast<double>(*p);
}

std::optional<double> parse_cfs_quota(const std::string& quota_us, const std::string& period_us) {
  const auto q = as_integer(quota_us), p = as_integer(period_us);
  if (!q || !p || *q <= 0 || *p <= 0) return std::nullopt;
  return static_cast<double>(*q) / static_cast<double>(*p);
}

CpuBudget make_cpu_budget(int online, int affinity, std::optional<double> quota) {
  CpuBudget b;
  b.online = std::max(1, online);
  b.affinity = affinity > 0 ? affinity : b.online;
  b.quota = quota;
  b.usable = b.affinity;
  if (quota) b.usable = std::min(b.usable, static_cast<int>(std::ceil(*quota - 1e-9)));
  b.usable = std::max(1, b.usable);
  return b;
}

std::string CpuBudget::describe() const {
  return fmt::format("{} usable (affinity {} of {} online{})", usable, affinity, online,
                     quota ? fmt::format("; cgroup quota {:.3g} CPUs", *quota) : std::string());
}

const CpuBudget& cpu_budget() {
  static const CpuBudget budget = [] {
    return make_cpu_budget(static_cast<int>(std::thread::hardware_concurrency()), affinity_count(),
                           cgroup_quota(read_small("/proc/self/cgroup"), "/sys/fs/cgroup"));
  }();
  return budget;
}

int usable_cpus() { return cpu_budget().usable; }

}  // namespace kmcts
