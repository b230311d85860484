// End to end on the CPU: a real search on each shipped problem finds a variant faster than
// the seed, and the store holds every evaluation the summary counts.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>

#include "search/run_search.hpp"
#include "search/run_store.hpp"

using namespace kmcts;
namespace fs = std::filesystem;

namespace {

void search_finds_a_speedup(const std::string& problem) {
  fs::path run_dir = fs::temp_directory_path() / ("kmcts-e2e-" + problem + "-" + std::to_string(::getpid()));
  fs::remove_all(run_dir);
  RunRequest r;
  r.problem_dir = fs::path(KMCTS_SOURCE_DIR) / "problems/cpu" / problem;
  r.config.set_value("search.budget", 10, "test");
  r.config.set_value("search.workers", 2, "test");
  r.config.set_value("evaluator.cache_dir", (run_dir.string() + "-cache"), "test");
  r.run_dir = run_dir;
  r.progress = false;
  auto summary = run_search(r);
  INFO(summary.dump(2));
  CHECK(summary["status"] == "completed");
  REQUIRE(summary.contains("best"));
  CHECK(summary["best"]["speedup_over_seed"].get<double>() > 1.0);
  CHECK(summary["best"]["speedup"].get<double>() > 1.0);
  auto store = RunStore::open(run_dir);
  auto evaluations = store->evaluations(true);
  CHECK(static_cast<int>(evaluations.size()) == summary["evaluations"].get<int>());
  for (const auto& e : evaluations)
    if (e.result.ok()) CHECK(e.result.candidate.samples() > 0);
  fs::remove_all(run_dir);
  fs::remove_all(run_dir.string() + "-cache");
}

}  // namespace

TEST_CASE("e2e cpu: matmul") { search_finds_a_speedup("matmul"); }
TEST_CASE("e2e cpu: layernorm") { search_finds_a_speedup("layernorm"); }
TEST_CASE("e2e cpu: conv3x3") { search_finds_a_speedup("conv3x3"); }
