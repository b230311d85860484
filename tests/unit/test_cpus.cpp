#include <doctest/doctest.h>

#include <sched.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/cpus.hpp"

using namespace kmcts;

TEST_CASE("cgroup v2 cpu.max: a quota in CPUs, or none") {
  CHECK(parse_cpu_max("150000 100000\n") == doctest::Approx(1.5));
  CHECK(parse_cpu_max("200000 100000") == doctest::Approx(2.0));
  CHECK_FALSE(parse_cpu_max("max 100000\n").has_value());
  CHECK_FALSE(parse_cpu_max("").has_value());            // no such file
  CHECK_FALSE(parse_cpu_max("100000").has_value());      // no period
  CHECK_FALSE(parse_cpu_max("abc 100000").has_value());
  CHECK_FALSE(parse_cpu_max("-5 100000").has_value());
  CHECK_FALSE(parse_cpu_max("100000 0").has_value());
}

TEST_CASE("cgroup v1 cfs quota: -1 is none") {
  CHECK(parse_cfs_quota("50000\n", "100000\n") == doctest::Approx(0.5));
  CHECK(parse_cfs_quota("400000", "100000") == doctest::Approx(4.0));
  CHECK_FALSE(parse_cfs_quota("-1\n", "100000\n").has_value());
  CHECK_FALSE(parse_cfs_quota("", "").has_value());
  CHECK_FALSE(parse_cfs_quota("12x", "100000").has_value());
}

namespace {

void put(const std::filesystem::path& file, const std::string& text) {
  std::filesystem::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

}  // namespace

TEST_CASE("cgroup quota: the tightest on the way up the process's cgroup, v2 or v1") {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("kmcts-test-cgroup-" + std::to_string(::getpid()));
  fs::remove_all(root);
  // v2: the leaf sets none, its parent 1.5 CPUs, the root none.
  put(root / "v2/kubepods/pod1/ctr/cpu.max", "max 100000\n");
  put(root / "v2/kubepods/pod1/cpu.max", "150000 100000\n");
  put(root / "v2/kubepods/cpu.max", "400000 100000\n");
  put(root / "v2/cpu.max", "max 100000\n");
  CHECK(cgroup_quota("0::/kubepods/pod1/ctr\n", (root / "v2").string()) == doctest::Approx(1.5));
  CHECK_FALSE(cgroup_quota("0::/elsewhere\n", (root / "v2").string()).has_value());  // no file: no quota
  CHECK_FALSE(cgroup_quota("", (root / "v2").string()).has_value());
  // v1: a parent's quota caps its children (the leaf sets none), under the cpu,cpuacct mount.
  put(root / "v1/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "-1\n");
  put(root / "v1/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
  put(root / "v1/cpu,cpuacct/docker/cpu.cfs_quota_us", "250000\n");
  put(root / "v1/cpu,cpuacct/docker/cpu.cfs_period_us", "100000\n");
  const std::string v1 = "12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n1:name=systemd:/docker/abc\n";
  CHECK(cgroup_quota(v1, (root / "v1").string()) == doctest::Approx(2.5));
  CHECK_FALSE(cgroup_quota("4:cpuset:/docker/abc\n", (root / "v1").string()).has_value());  // no cpu controller
  fs::remove_all(root);
}

TEST_CASE("usable CPUs: the affinity mask, capped by a quota rounded up") {
  CHECK(make_cpu_budget(64, 2, std::nullopt).usable == 2);      // a 2-CPU cpuset on a 64-core host
  CHECK(make_cpu_budget(64, 64, 1.5).usable == 2);              // 1.5 CPUs of quota: two threads can share it
  CHECK(make_cpu_budget(64, 64, 4.0).usable == 4);              // exactly 4, not 5
  CHECK(make_cpu_budget(64, 3, 8.0).usable == 3);               // the tighter of the two
  CHECK(make_cpu_budget(16, 16, 0.25).usable == 1);             // never below one
  CHECK(make_cpu_budget(8, 0, std::nullopt).usable == 8);       // affinity unknown: online
  CHECK(make_cpu_budget(64, 2, 1.5).describe() == "2 usable (affinity 2 of 64 online; cgroup quota 1.5 CPUs)");
  CHECK(make_cpu_budget(4, 4, std::nullopt).describe() == "4 usable (affinity 4 of 4 online)");
}

TEST_CASE("this process's budget agrees with its affinity mask") {
  cpu_set_t set;
  CPU_ZERO(&set);
  REQUIRE(sched_getaffinity(0, sizeof(set), &set) == 0);
  const CpuBudget& b = cpu_budget();
  CHECK(b.affinity == CPU_COUNT(&set));
  CHECK(b.usable >= 1);
  CHECK(b.usable <= b.affinity);
  CHECK(usable_cpus() == b.usable);
}
