// Nsight Compute on demand (issue 30, item 2), without a GPU: the bottleneck verdicts from the
// counters, the roofline position, which measurements are profiled ("best": each new best),
// and the cache of profiles by source, GPU and metric list.
#include <doctest/doctest.h>

#include <fstream>

#include "core/error.hpp"
#include "hardware/cuda/bottleneck.hpp"
#include "hardware/cuda/deep_profile.hpp"
#include "scratch.hpp"

using namespace kmcts;
using namespace kmcts::cuda;
using nlohmann::json;

TEST_CASE("bottleneck: memory-bound, compute-bound, or neither near its peak with the stall to look at") {
  auto memory = bottleneck_of({{"dram_throughput_pct", 81.5}, {"sm_throughput_pct", 22.0}});
  REQUIRE(memory);
  CHECK(memory->kind == "memory-bound");
  CHECK(memory->line.rfind("memory-bound: DRAM at 82% of its peak (SM 22%)", 0) == 0);
  auto compute = bottleneck_of({{"dram_throughput_pct", 30.0}, {"sm_throughput_pct", 75.0}});
  REQUIRE(compute);
  CHECK(compute->kind == "compute-bound");
  CHECK(compute->line.rfind("compute-bound: SM at 75% of its peak (DRAM 30%)", 0) == 0);
  // Both high: the larger names it.
  CHECK(bottleneck_of({{"dram_throughput_pct", 70.0}, {"sm_throughput_pct", 90.0}})->kind == "compute-bound");
  auto latency = bottleneck_of({{"dram_throughput_pct", 12.0},
                                {"sm_throughput_pct", 9.0},
                                {"achieved_occupancy_pct", 18.0},
                                {"stall_long_scoreboard_pct", 44.0},
                                {"stall_barrier_pct", 20.0}});
  REQUIRE(latency);
  CHECK(latency->kind == "latency/occupancy-bound");
  CHECK(latency->line ==
        "latency/occupancy-bound: neither DRAM (12%) nor SM (9%) is near its peak; achieved occupancy 18%; warps mostly "
        "waiting on global or local memory (long scoreboard) (44%)");
  CHECK_FALSE(bottleneck_of({{"l2_hit_rate_pct", 50.0}}));
  CHECK_FALSE(bottleneck_of(json()));
}

TEST_CASE("roofline position: arithmetic intensity against the ridge point") {
  // 4.8 TB/s and 60 TFLOP/s: the ridge at 12.5 FLOP/byte.
  CHECK(roofline_position(1e6, 8e6, 60e12, 4.8e12) ==
        "arithmetic intensity 0.125 FLOP/byte against the ridge point at 12.5: the memory roof bounds it");
  CHECK(roofline_position(2e9, 1e7, 60e12, 4.8e12).find("the compute roof bounds it") != std::string::npos);
  CHECK(roofline_position(0, 8e6, 60e12, 4.8e12).empty());
  CHECK(roofline_position(1e6, 8e6, 0, 4.8e12).empty());
}

TEST_CASE("deep profiles: 'best' profiles the first correct measurement and each new best, 'all' every one") {
  const auto dir = test::fresh_dir("deep-profile");
  DeepProfiles best("best", dir);
  CHECK(best.wanted(1.0));   // the first (the seed's)
  CHECK_FALSE(best.wanted(0.9));
  CHECK_FALSE(best.wanted(1.0));  // a tie is no new best
  CHECK(best.wanted(1.7));
  CHECK_FALSE(best.wanted(1.2));
  DeepProfiles all("all", dir);
  CHECK(all.wanted(0.1));
  CHECK(all.wanted(0.1));
  CHECK_THROWS_AS(DeepProfiles("sometimes", dir), InputError);
}

TEST_CASE("deep profiles: cached by source, GPU and metric list; a torn file is profiled again") {
  const auto dir = test::fresh_dir("deep-profile-cache");
  DeepProfiles profiles("best", dir);
  const std::string key = DeepProfiles::key("abc", "p1", "NVIDIA H200");
  CHECK(key != DeepProfiles::key("abd", "p1", "NVIDIA H200"));
  CHECK(key != DeepProfiles::key("abc", "p2", "NVIDIA H200"));
  CHECK(key != DeepProfiles::key("abc", "p1", "NVIDIA H100 80GB HBM3"));
  CHECK_FALSE(profiles.cached(key));
  const json counters = {{"kernels", json::array({{{"name", "k"}, {"dram_throughput_pct", 81.5}}})}};
  profiles.store(key, counters);
  REQUIRE(profiles.cached(key));
  CHECK(*profiles.cached(key) == counters);
  CHECK(DeepProfiles("all", dir).cached(key));  // another evaluator (a resume) finds it
  std::ofstream(dir / "ncu" / (key + ".json")) << "{\"kernels\": [";
  CHECK_FALSE(profiles.cached(key));
}

TEST_CASE("deep profiles: each kernel gets its verdict, the call its roofline position") {
  Problem problem;
  problem.flops = 1e6;
  problem.bytes = 8e6;
  const json counters = {{"kernels", json::array({{{"name", "k"}, {"dram_throughput_pct", 81.5}, {"sm_throughput_pct", 20.0}},
                                                  {{"name", "unmeasured"}}})}};
  const json v = with_verdicts(counters, problem, Roofline{60e12, 4.8e12});
  CHECK(v["kernels"][0]["bottleneck"].get<std::string>().rfind("memory-bound", 0) == 0);
  CHECK(v["kernels"][0]["bottleneck_kind"] == "memory-bound");  // what the archive keeps, not parsed back from the line
  CHECK_FALSE(v["kernels"][1].contains("bottleneck"));
  CHECK(v["roofline_position"].get<std::string>().find("the memory roof bounds it") != std::string::npos);
  CHECK_FALSE(with_verdicts(counters, Problem{}, Roofline{60e12, 4.8e12}).contains("roofline_position"));
}
