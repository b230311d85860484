// `kmcts kernelbench`'s parts that need no search: finding a level's problems in a checkout,
// the --problems selection, and the leaderboard arithmetic on a fixed set of results.
#include <doctest/doctest.h>

#include <fstream>

#include "campaigns/kb_leaderboard.hpp"
#include "campaigns/kb_remeasure.hpp"
#include "campaigns/kb_problems.hpp"
#include "core/error.hpp"
#include "core/problem.hpp"
#include "scratch.hpp"

using namespace kmcts;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

fs::path fake_checkout() {
  const fs::path root = kmcts::test::fresh_dir("kb-checkout");
  const fs::path level = root / "KernelBench" / "level1";
  fs::create_directories(level);
  for (const char* name : {"1_Square_matmul.py", "2_ReLU.py", "10_Softmax.py", "19_ReLU_big.py", "README.md", "notes.py"})
    std::ofstream(level / name) << "# stand-in\n";
  return root;
}

std::vector<std::string> names(const std::vector<KbProblemFile>& files) {
  std::vector<std::string> out;
  for (const auto& f : files) out.push_back(f.name);
  return out;
}

}  // namespace

TEST_CASE("kernelbench campaign: a level's problems come by number from a checkout or a plain folder") {
  const fs::path root = fake_checkout();
  const auto all = discover_level(root, 1);
  CHECK(names(all) == std::vector<std::string>{"1_Square_matmul", "2_ReLU", "10_Softmax", "19_ReLU_big"});
  CHECK(all[2].number == 10);
  CHECK(names(discover_level(root / "KernelBench", 1)).size() == 4);  // KB_ROOT/level1 works too
  CHECK_THROWS_WITH_AS(discover_level(root, 2), doctest::Contains("level2"), InputError);
}

TEST_CASE("kernelbench campaign: --problems takes numbers, ranges and names, and names what matches nothing") {
  const auto all = discover_level(fake_checkout(), 1);
  CHECK(names(select_problems(all, "")) == names(all));
  CHECK(names(select_problems(all, "1-2")) == std::vector<std::string>{"1_Square_matmul", "2_ReLU"});
  CHECK(names(select_problems(all, "19, Softmax,2_ReLU")) == std::vector<std::string>{"2_ReLU", "10_Softmax", "19_ReLU_big"});
  CHECK(names(select_problems(all, "3-12")) == std::vector<std::string>{"10_Softmax"});
  CHECK_THROWS_WITH_AS(select_problems(all, "1,GELU,50-60"), doctest::Contains("GELU, 50-60"), InputError);
}

TEST_CASE("kernelbench campaign: fast_p, means and the audit lists on a fixed set of results") {
  auto result = [](const char* name, bool correct, double eager, json compile) {
    return json{{"problem", name}, {"status", "completed"},      {"correct", correct},
                {"speedup", {{"eager", eager}, {"compile", compile}}}, {"evaluations", 10},
                {"gpu_seconds", 20.0}, {"tokens", 1000},        {"dollars", 0.5}};
  };
  std::vector<json> problems = {result("a", true, 2.0, 1.0), result("b", true, 0.5, nullptr),
                                result("c", false, 3.0, 3.0), result("d", true, 12.0, 0.9)};
  problems.push_back({{"problem", "e"}, {"status", "error"}, {"message", "harness died"}, {"correct", false},
                      {"hygiene", {{"findings", json::array({{{"finding", "zero_output_passes"}, {"detail", "tiny"}}})}}}});
  CHECK(fast_p(problems, "eager", 0.0) == doctest::Approx(3.0 / 5));
  CHECK(fast_p(problems, "eager", 1.0) == doctest::Approx(2.0 / 5));  // a and d; c is not correct
  CHECK(fast_p(problems, "compile", 1.0) == doctest::Approx(0.0));     // 1.0 is not faster than 1
  CHECK(fast_p(problems, "compile", 0.8) == doctest::Approx(2.0 / 5));
  const json s = leaderboard_summary(problems);
  CHECK(s["correct"] == 3);
  CHECK(s["correct_fraction"].get<double>() == doctest::Approx(0.6));
  CHECK(s["geomean_speedup"]["eager"].get<double>() == doctest::Approx(std::cbrt(2.0 * 0.5 * 12.0)));
  CHECK(s["mean_speedup"]["eager"].get<double>() == doctest::Approx(14.5 / 3));
  CHECK(s["speedups_counted"]["compile"] == 2);
  CHECK(s["cost_per_problem"]["gpu_seconds"].get<double>() == doctest::Approx(80.0 / 5));
  REQUIRE(s["excessive_speedups"].size() == 1);
  CHECK(s["excessive_speedups"][0]["problem"] == "d");
  REQUIRE(s["vacuous"].size() == 1);
  CHECK(s["vacuous"][0]["problem"] == "e");
  REQUIRE(s["failed"].size() == 1);
  const std::string md = leaderboard_markdown(s, {{"level", 1}, {"mode", "hardened"}, {"budget", 10}});
  CHECK(md.find("| eager | 0.600 |") != std::string::npos);
  CHECK(md.find("d: 12.00x vs eager") != std::string::npos);
  CHECK(md.find("e: zero_output_passes (tiny)") != std::string::npos);
  CHECK(leaderboard_summary({})["geomean_speedup"]["eager"].is_null());
  // Without --budget the campaign records none: the report says whose budget applies.
  CHECK(leaderboard_markdown(s, {{"level", 1}, {"mode", "hardened"}, {"budget", nullptr}}).find("budget search.budget") !=
        std::string::npos);
}

TEST_CASE("kernelbench campaign: 'faster' needs the interval, fast_p_own the own-kernel share, seeds are an A/A check") {
  auto result = [](const char* name, double speedup, json ci, json share, double seed) {
    return json{{"problem", name},
                {"status", "completed"},
                {"correct", true},
                {"speedup", {{"eager", speedup}}},
                {"speedup_ci", {{"eager", ci}}},
                {"own_share", share},
                {"seed", {{"speedup", {{"eager", seed}}}}}};
  };
  const std::vector<json> problems = {
      result("noop", 1.009, json::array({1.0087, 1.0091}), 1.0, 1.0089),  // an A/A offset, not faster
      result("fast", 1.5, json::array({1.4, 1.6}), 0.95, 1.001),
      result("partial", 1.3, json::array({1.2, 1.4}), 0.4, 0.999),        // library kernels did most of it
      result("unmeasured", 1.2, nullptr, nullptr, 0.9999)};                // no interval, no share (faithful)
  CHECK(fast_p(problems, "eager", 1.0) == doctest::Approx(3.0 / 4));                 // noop's bound is under 1.01
  CHECK(fast_p(problems, "eager", 1.0, false) == doctest::Approx(1.0));              // KernelBench's point count
  CHECK(fast_p(problems, "eager", 1.0, true, 0.9) == doctest::Approx(1.0 / 4));      // fast alone
  CHECK(fast_p(problems, "eager", 0.5, true) == doctest::Approx(1.0));               // p < 1: the point estimate
  CHECK(fast_p(problems, "eager", 1.5, true) == doctest::Approx(0.0));               // 1.4 does not clear 1.515
  const json s = leaderboard_summary(problems, LeaderboardOptions{0.9});
  CHECK(s["fast_p"]["eager"]["1"].get<double>() == doctest::Approx(0.75));
  CHECK(s["fast_p_point"]["eager"]["1"].get<double>() == doctest::Approx(1.0));
  CHECK(s["fast_p_own"]["eager"]["1"].get<double>() == doctest::Approx(0.25));
  CHECK(s["own_share"]["measured"] == 3);
  CHECK(s["own_share"]["below_threshold"] == 1);
  CHECK(s["own_share"]["median"].get<double>() == doctest::Approx(0.95));
  CHECK(s["seed_aa"]["seeds"] == 4);
  REQUIRE(s["seed_aa"]["flagged"].size() == 1);
  CHECK(s["seed_aa"]["flagged"][0]["problem"] == "noop");
  REQUIRE(s["per_problem"].size() == 4);
  CHECK(s["per_problem"][2]["own_share"].get<double>() == doctest::Approx(0.4));
  CHECK(s["per_problem"][3]["ci_low"].is_null());
  const std::string md = leaderboard_markdown(s, {{"level", 1}, {"mode", "hardened"}, {"budget", 10}});
  CHECK(md.find("| eager (own kernels) | 0.500 | 0.500 | 0.500 | 0.250 | 0.000 | 0.000 |") != std::string::npos);
  CHECK(md.find("- noop: seed 1.0089x") != std::string::npos);
  CHECK(md.find("| partial | yes | 1.300 | 1.200 | 0.40 | 0.9990 |") != std::string::npos);
}

TEST_CASE("kernelbench campaign: the best candidate is scored by its re-measurement") {
  const json searched = {{"correct", true}, {"gpu_seconds", 30.0}, {"speedup", {{"eager", 2.4}, {"compile", 1.2}}},
                         {"speedup_ci", {{"eager", {2.3, 2.5}}}}};
  json held = searched;
  apply_remeasurement(held, {{"verdict", "ok"}, {"speedup", {{"eager", 2.1}, {"compile", 1.05}}},
                             {"speedup_ci", {{"eager", {2.0, 2.2}}}}, {"gpu_seconds", 5.0}});
  CHECK(held["correct"] == true);
  CHECK(held["speedup"]["eager"] == 2.1);
  CHECK(held["search_speedup"]["eager"] == 2.4);
  CHECK(held["search_speedup_ci"]["eager"][1] == 2.5);
  CHECK(held["gpu_seconds"].get<double>() == doctest::Approx(35.0));
  CHECK(fast_p({held}, "compile", 1.0) == doctest::Approx(1.0));
  json failed = searched;
  apply_remeasurement(failed, {{"verdict", "wrong_answer"}, {"message", "wrong answer: trial 3"}, {"gpu_seconds", 1.0}});
  CHECK(failed["correct"] == false);
  CHECK(failed["speedup"].empty());
  CHECK(failed["message"].get<std::string>().find("failed the re-measurement: wrong answer: trial 3") != std::string::npos);
  CHECK(fast_p({failed}, "eager", 0.0) == doctest::Approx(0.0));
}

TEST_CASE("kernelbench campaign: the project's own KernelBench-format levels load as problems") {
  const fs::path root = fs::path(KMCTS_SOURCE_DIR) / "problems" / "kernelbench-format";
  size_t count = 0;
  for (int level = 1; level <= 3; ++level)
    for (const auto& f : discover_level(root, level)) {
      const Problem p = load_problem(f.path);
      CHECK(p.kind == "kernelbench");
      CHECK(p.seed_source.find("class ModelNew(") != std::string::npos);
      ++count;
    }
  CHECK(count >= 7);
}
