// OUT/index.sqlite of `kmcts ablate`: what the writer puts in, the readers give back.
#include <doctest/doctest.h>

#include <fstream>

#include "campaigns/ablation_index.hpp"
#include "core/error.hpp"
#include "scratch.hpp"

using namespace kmcts;
namespace fs = std::filesystem;

TEST_CASE("ablation index: grid, axes, configs and runs round-trip; a run row is replaced, not duplicated") {
  const fs::path out = kmcts::test::fresh_dir("ablation-index");
  fs::create_directories(out);
  {
    auto index = AblationIndex::open_for_writing(out);
    AblationConfigRow a{"policy=uct", 0, nlohmann::ordered_json{{"policy", "uct"}, {"c", "1"}}, {"search.policy=uct"}};
    AblationConfigRow b{"policy=beam", 1, nlohmann::ordered_json{{"policy", "beam"}, {"c", "1"}},
                        {"search.strategy=beam", "search.exploration=1"}};
    index->write_grid({{"name", "g"}, {"baseline", "policy=uct"}, {"budget", "12"}}, {"policy", "c"}, {b, a});
    AblationRunRow pending;
    pending.run_id = "policy=beam--matmul--s1";
    pending.config = "policy=beam";
    pending.problem = "matmul";
    pending.seed = 1;
    pending.run_dir = "runs/policy=beam--matmul--s1";
    index->put_run(pending);
    AblationRunRow done = pending;
    done.run_id = "policy=uct--matmul--s0";
    done.config = "policy=uct";
    done.seed = 0;
    done.status = "done";
    done.best_speedup = 40.5;
    done.evaluations = 12;
    done.tokens = 0;
    done.dollars = 0.0;
    done.started_at = "2026-12-01T00:00:00Z";
    index->put_run(done);
    pending.status = "failed";
    pending.error = "seed kernel failed";
    index->put_run(pending);  // the same run again: its row changes
  }
  CHECK(read_ablation_grid(out).at("baseline") == "policy=uct");
  CHECK(read_ablation_axes(out) == std::vector<std::string>{"policy", "c"});
  const auto configs = read_ablation_configs(out);
  REQUIRE(configs.size() == 2);
  CHECK(configs[0].config == "policy=uct");  // by position, not insertion order
  CHECK(configs[0].axis_values.begin().key() == "policy");  // axis order kept
  CHECK(configs[1].overrides == std::vector<std::string>{"search.strategy=beam", "search.exploration=1"});
  const auto runs = read_ablation_runs(out);
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].config == "policy=uct");  // ordered by configuration position
  CHECK(runs[0].best_speedup == doctest::Approx(40.5));
  CHECK(runs[0].evaluations == 12);
  CHECK_FALSE(runs[0].wall_s.has_value());  // NULL stays unknown, not 0
  CHECK(runs[1].status == "failed");
  CHECK(runs[1].error == "seed kernel failed");
  CHECK(runs[1].seed == 1);
  fs::remove_all(out);
}

TEST_CASE("ablation index: a folder without one, or another SQLite file, is named in the error") {
  const fs::path out = kmcts::test::fresh_dir("ablation-index-missing");
  fs::create_directories(out);
  CHECK_THROWS_WITH_AS(read_ablation_runs(out), doctest::Contains("index.sqlite"), InputError);
  std::ofstream(out / "index.sqlite") << "";
  {  // an empty file opens as an empty database: not ours
    CHECK_THROWS_WITH_AS(read_ablation_runs(out), doctest::Contains("not a kmcts ablation index"), InputError);
  }
  fs::remove_all(out);
}
