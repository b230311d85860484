#include <doctest/doctest.h>

#include <sched.h>

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
