// `kmcts report` on a small hand-made grid (run stores written directly, numbers chosen so
// every table value can be worked out by hand): tables, formats, plots and a run's HTML page.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>

#include <fmt/format.h>

#include "campaigns/ablation_index.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "reports/grid_data.hpp"
#include "reports/grid_report.hpp"
#include "reports/plots.hpp"
#include "reports/report_format.hpp"
#include "reports/run_html.hpp"
#include "scratch.hpp"
#include "search/run_store.hpp"

using namespace kmcts;
namespace fs = std::filesystem;

namespace {

// A chain of variants: evaluation i is node i, child of node i - 1; speedup 0 = a failure, -1 =
// a replay miss. `evaluator`: the description the run records.
void write_run(const fs::path& dir, const std::string& problem, const std::vector<double>& speedups,
               const nlohmann::json& evaluator = {{"evaluator", "cuda"}}) {
  auto store = RunStore::create(dir, {{"problem", problem}, {"command_line", "test"}, {"evaluator", evaluator}},
                                {{"search", {{"seed", 0}}}});
  RunStore::Transaction tx(*store);
  for (size_t i = 0; i < speedups.size(); ++i) {
    NodeRecord n;
    n.id = static_cast<int>(i);
    n.hash = fmt::format("{:064x}", i + 1);
    n.status = speedups[i] > 0 ? NodeStatus::ok : NodeStatus::failed;
    n.verdict = speedups[i] > 0 ? "ok" : "compile_error";
    n.origin = i == 0 ? "seed" : "expand";
    n.speedup = speedups[i];
    n.median_ns = 1000;
    n.plan = i == 0 ? "" : fmt::format("step {}", i);
    store->add_node(n);
    store->put_source(n.hash, fmt::format("// kernel\nint block() {{ return {}; }}\nint unroll() {{ return 1; }}\n", i));
    if (i > 0) {
      EdgeRecord e;
      e.parent = static_cast<int>(i) - 1;
      e.child = static_cast<int>(i);
      e.plan = n.plan;
      store->add_edge(e);
    }
    EvaluationRecord ev;
    ev.node = n.id;
    ev.result.verdict = speedups[i] > 0 ? Verdict::ok : speedups[i] < 0 ? Verdict::infra_error : Verdict::compile_error;
    ev.result.speedup = std::max(0.0, speedups[i]);
    if (speedups[i] < 0) ev.result.message = "replay miss: no recorded run of 'p' measured source 0123", ev.result.details["replay_miss"] = true;
    ev.result.run_seconds = 0.5;
    store->add_evaluation(ev);
  }
  tx.commit();
  store->finish({{"status", "completed"}, {"tokens", 0}, {"dollars", 0.0}, {"wall_seconds", 3.0}});
}

// Configurations A (baseline) and B, problems p1 and p2, seeds 0-2, budget 12. p1's best known
// speedup is 10 (target 9.8), p2's is 4 (target 3.92). p2's runs stopped after 2 evaluations.
fs::path make_grid(const std::string& name) {
  const fs::path out = kmcts::test::fresh_dir(name);
  fs::create_directories(out);
  auto index = AblationIndex::open_for_writing(out);
  index->write_grid({{"name", "toy"}, {"baseline", "A"}, {"budget", "12"}}, {"policy"},
                    {{"A", 0, {{"policy", "a"}}, {"search.policy=uct"}}, {"B", 1, {{"policy", "b"}}, {"search.policy=puct"}}});
  auto run = [&](const std::string& config, const std::string& problem, int seed, std::vector<double> speedups) {
    AblationRunRow row;
    row.run_id = fmt::format("{}--{}--s{}", config, problem, seed);
    row.config = config;
    row.problem = problem;
    row.seed = seed;
    row.run_dir = "runs/" + row.run_id;
    row.status = "done";
    row.tokens = 0;
    row.dollars = 0.0;
    row.wall_s = (config == "A" ? 10.0 : 20.0) + seed;
    row.gpu_s = 1.0;
    write_run(out / row.run_dir, problem, speedups);
    index->put_run(row);
  };
  run("A", "p1", 0, {1, 2, 0, 4, 5, 5, 5, 5, 5, 5, 5, 8});  // best@10 5, final 8, 1 failure
  run("A", "p1", 1, std::vector<double>(12, 3.0));          // 3, 3
  run("A", "p1", 2, {1, 0, 0, 6, 6, 6, 6, 6, 6, 6, 6, 6});   // 6, 6, 2 failures
  run("B", "p1", 0, {1, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10});  // reaches 9.8 at 2
  run("B", "p1", 1, {1, 2, 4, 9.9, 9.9, 9.9, 9.9, 9.9, 9.9, 9.9, 9.9, 9.9});  // at 4
  run("B", "p1", 2, {1, 2, 3, 5, 7, 7, 7, 7, 7, 7, 7, 7});   // never: censored
  for (int seed = 0; seed < 3; ++seed) {
    run("A", "p2", seed, {1, 2});
    run("B", "p2", seed, {1, seed == 0 ? 4.0 : 2.0});
  }
  AblationRunRow failed;
  failed.run_id = "B--p1--s3";
  failed.config = "B";
  failed.problem = "p1";
  failed.seed = 3;
  failed.run_dir = "runs/B--p1--s3";
  failed.status = "failed";
  failed.error = "seed kernel | failed";
  index->put_run(failed);
  return out;
}

size_t metric(const GridReport& r, const std::string& key) {
  for (size_t m = 0; m < r.metrics.size(); ++m)
    if (r.metrics[m].key == key) return m;
  FAIL("no metric " << key);
  return 0;
}

}  // namespace

TEST_CASE("report grid: metrics, intervals, censoring and the comparison, worked out by hand") {
  const fs::path out = make_grid("report-grid");
  const GridData grid = load_grid(out);
  CHECK(grid.runs.size() == 12);
  REQUIRE(grid.left_out.size() == 1);
  CHECK(grid.budget == 12);
  CHECK(grid.problems == std::vector<std::string>{"p1", "p2"});
  const GridReport r = compute_grid_report(grid, ReportSettings{});
  // best@25, @50, @100 exceed the budget of 12.
  std::vector<std::string> keys;
  for (const Metric& m : r.metrics) keys.push_back(m.key);
  CHECK(keys == std::vector<std::string>{"best@10", "final", "to_target", "failure_rate", "evaluations", "tokens",
                                         "dollars", "wall_s", "gpu_s"});
  CHECK(r.best_known.at("p1") == 10);
  CHECK(r.best_known.at("p2") == 4);
  REQUIRE(r.scopes.size() == 3);
  const size_t p1 = 1, best10 = metric(r, "best@10"), to_target = metric(r, "to_target");
  CHECK(r.scopes[p1].name == "p1");
  const CellStats& a10 = r.stats[p1].cells.at("A")[best10];
  CHECK(a10.mean.value == doctest::Approx(14.0 / 3));  // (5 + 3 + 6) / 3
  CHECK(a10.median.value == 5);
  CHECK(a10.mean.ci.lo >= 3);
  CHECK(a10.mean.ci.hi <= 6);
  // Evaluations to 9.8: B reached at 2 and 4, its seed 2 never (12 in the restricted mean,
  // +infinity in the median); A never.
  const CellStats& bt = r.stats[p1].cells.at("B")[to_target];
  CHECK(bt.reached == 2);
  CHECK(bt.mean.value == doctest::Approx(6));  // (2 + 4 + 12) / 3
  CHECK(bt.median.value == 4);
  const CellStats& at = r.stats[p1].cells.at("A")[to_target];
  CHECK(at.reached == 0);
  CHECK(std::isinf(at.median.value));
  // B - A, paired by seed: best@10 differences 10-5, 9.9-3, 7-6 = 5, 6.9, 1: mean 4.3.
  const Estimate d = r.stats[p1].vs_baseline.at("B")[best10].difference;
  CHECK(d.n == 3);
  CHECK(d.value == doctest::Approx(4.3));
  // Of the 27 equally likely resamples of 3 pairs, the smallest mean is 1 and the largest 6.9.
  CHECK(d.ci.lo >= 1);
  CHECK(d.ci.hi <= 6.9 + 1e-9);
  CHECK_FALSE(r.stats[p1].vs_baseline.count("A"));
  // p2's runs stopped after 2 evaluations: best@10 is their final best.
  CHECK(r.stats[2].cells.at("A")[best10].mean.value == 2);
  // All problems, per seed: geometric mean over p1 and p2 of the final speedups:
  // A seed 0: sqrt(8 * 2) = 4; B seed 0: sqrt(10 * 4); failure rate: mean of p1's 1/12 and p2's 0.
  const auto& all_a = r.scopes[0].by_config.at("A");
  REQUIRE(all_a.size() == 3);
  CHECK(all_a[0].metrics[metric(r, "final")].value == doctest::Approx(4));
  CHECK(r.scopes[0].by_config.at("B")[0].metrics[metric(r, "final")].value == doctest::Approx(std::sqrt(40.0)));
  CHECK(all_a[0].metrics[metric(r, "failure_rate")].value == doctest::Approx(1.0 / 24));
  CHECK(all_a[0].curve.size() == 12);
  CHECK(all_a[0].curve[1] == doctest::Approx(2));  // sqrt(2 * 2) after 2 evaluations
  // B's across-problems to_target: seed 0 reached both (2 and 2), the others missed p2.
  CHECK(r.stats[0].cells.at("B")[to_target].reached == 1);
  const CurveBand& band = r.stats[p1].curves.at("A");
  CHECK(band.mean.size() == 12);
  CHECK(band.mean.back() == doctest::Approx(17.0 / 3));  // (8 + 3 + 6) / 3
  fs::remove_all(out);
}

TEST_CASE("report grid: markdown, CSV and JSON hold the tables") {
  const fs::path out = make_grid("report-formats");
  const GridData grid = load_grid(out);
  const GridReport r = compute_grid_report(grid, ReportSettings{});
  const std::string md = report_markdown(r);
  for (const char* part : {"# Ablation report: toy", "## All problems", "## Problem p1", "## Problem p2",
                           "### Search quality: mean [95% CI]", "### Search quality: median [95% CI]",
                           "### Search quality: difference from `A`", "### Cost: mean [95% CI]", "(2/3 reached)",
                           "| configuration | n | best@10 | final | evals to 98% |", ">12", "+4.30 [",
                           "## Runs left out", "| B--p1--s3 | failed | seed kernel / failed |"})
    CHECK_MESSAGE(md.find(part) != std::string::npos, part);
  CHECK(md.find("| tokens") == std::string::npos);  // 0 in every run: no column
  const std::string csv = report_csv(r);
  CHECK(csv.rfind("scope,config,metric,n,mean,mean_lo,mean_hi,median,median_lo,median_hi,reached,diff,diff_lo,diff_hi,pairs\n", 0) == 0);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 1 + 3 * 2 * 9);  // scopes x configs x metrics
  CHECK(csv.find("p1,B,best@10,3,8.96667,") != std::string::npos);
  CHECK(csv.find("p1,A,to_target,3,12,12,12,inf,inf,inf,0,,,,") != std::string::npos);
  const nlohmann::json j = report_json(r);
  CHECK(j["grid"]["baseline"] == "A");
  CHECK(j["settings"]["resamples"] == kTableResamples);
  CHECK(j["scopes"][1]["configs"]["B"]["metrics"]["to_target"]["median"] == 4);
  CHECK(j["scopes"][1]["configs"]["A"]["metrics"]["to_target"]["median"].is_null());
  CHECK(j["scopes"][1]["configs"]["B"]["metrics"]["best@10"]["vs_baseline"]["difference"].get<double>() ==
        doctest::Approx(4.3));
  fs::remove_all(out);
}

TEST_CASE("report grid: replay misses are their own category, and a grid with many says so") {
  const fs::path out = kmcts::test::fresh_dir("report-misses");
  fs::create_directories(out);
  auto index = AblationIndex::open_for_writing(out);
  index->write_grid({{"name", "replayed"}, {"baseline", "A"}, {"budget", "10"}}, {"policy"},
                    {{"A", 0, {{"policy", "a"}}, {"search.policy=uct"}}});
  const nlohmann::json replayed_cpu = {{"evaluator", "replay"}, {"device", {{"evaluator", "cpu"}}}};
  auto run = [&](int seed, const std::vector<double>& speedups) {
    AblationRunRow row;
    row.run_id = fmt::format("A--p1--s{}", seed);
    row.config = "A", row.problem = "p1", row.seed = seed, row.run_dir = "runs/" + row.run_id, row.status = "done";
    row.gpu_s = 1.0;
    write_run(out / row.run_dir, "p1", speedups, replayed_cpu);
    index->put_run(row);
  };
  run(0, {1, -1, 2, 0, -1, 3, 3, 3, 3, 3});   // 2 misses, 1 failure of 8 measured
  run(1, {1, 2, 2, 2, 2, 2, 2, 2, 2, -1});    // 1 miss, no failure
  const GridData grid = load_grid(out);
  CHECK(grid.replay_misses.misses == 3);
  CHECK(grid.replay_misses.evaluations == 20);
  CHECK(grid.replay_misses.runs_with_misses == 2);
  CHECK(grid.timed_on == "CPU");  // what the replayed runs timed
  const GridReport r = compute_grid_report(grid, ReportSettings{});
  const auto& all = r.stats.front().cells.at("A");
  CHECK(all[metric(r, "failure_rate")].mean.value == doctest::Approx((1.0 / 8 + 0.0) / 2));
  CHECK(all[metric(r, "replay_misses")].mean.value == doctest::Approx((0.2 + 0.1) / 2));
  CHECK(r.metrics[metric(r, "gpu_s")].label == "CPU s");
  const std::string md = report_markdown(r);
  for (const char* part : {"**Warning:** 15.0% of the evaluations (3 of 20, in 2 of 2 runs) were replay misses",
                           "| replay misses |", "| CPU s |"})
    CHECK_MESSAGE(md.find(part) != std::string::npos, part);
  CHECK(md.find("GPU s") == std::string::npos);
  CHECK(report_json(r)["grid"]["replay_miss_warning"].get<std::string>().find("15.0%") == 0);
  // Below the threshold: counted, not warned about.
  ReplayMisses few;
  few.add(1, 40);
  CHECK(replay_miss_warning(few).empty());
  few.add(2, 10);
  CHECK(replay_miss_warning(few).find("6.0% of the evaluations (3 of 50, in 2 of 2 runs)") == 0);
  fs::remove_all(out);
}

TEST_CASE("report grid: a baseline that is not a configuration, or a folder that is not a grid") {
  const fs::path out = make_grid("report-baseline");
  CHECK_THROWS_WITH_AS(load_grid(out, "C"), doctest::Contains("baseline 'C' is not a configuration"), InputError);
  CHECK(load_grid(out, "B").baseline == "B");
  CHECK_THROWS_WITH_AS(load_grid(out / "runs"), doctest::Contains("not a grid folder"), InputError);
  fs::remove_all(out);
}

TEST_CASE("report grid: plots are written as PNG and SVG with their data and scripts") {
  const fs::path out = make_grid("report-plots");
  const GridData grid = load_grid(out);
  const GridReport r = compute_grid_report(grid, ReportSettings{});
  const fs::path dir = out / "report";
  const PlotResult missing = write_plots(r, dir / "no-gnuplot", "kmcts-no-such-gnuplot");
  CHECK_FALSE(missing.rendered);
  CHECK(missing.message.find("gnuplot-nox") != std::string::npos);
  CHECK(fs::file_size(dir / "no-gnuplot" / "data" / "curve_all.dat") > 0);
  CHECK(fs::exists(dir / "no-gnuplot" / "curve_all.gp"));
  const PlotResult plots = write_plots(r, dir);
  if (!plots.rendered) {
    MESSAGE("gnuplot is not installed: figures not checked (" << plots.message << ")");
  } else {
    for (const char* kind : {"curve", "final", "cost_wall", "cost_gpu"})
      for (const char* scope : {"all", "p1", "p2"})
        for (const char* ext : {".png", ".svg"}) {
          const fs::path f = dir / fmt::format("{}_{}{}", kind, scope, ext);
          CHECK_MESSAGE((fs::exists(f) && fs::file_size(f) > 1000), f.string());
        }
    CHECK_FALSE(fs::exists(dir / "cost_tokens_all.png"));  // no run spent tokens
    CHECK(read_file(dir / "curve_all.png").rfind("\x89PNG", 0) == 0);
    CHECK(read_file(dir / "curve_p1.svg").find("<svg") != std::string::npos);
    CHECK(plots.figures.size() == 12);
  }
  fs::remove_all(out);
}

TEST_CASE("report run page: one self-contained HTML file with every section") {
  const fs::path out = make_grid("report-html");
  const std::string html = run_html(out / "runs" / "A--p1--s0", {"A", {"search.policy=uct"}, "../report.md"});
  for (const char* part : {"<!DOCTYPE html>", "<style>", "id=\"summary\"", "id=\"tree\"", "id=\"plans\"", "id=\"diff\"",
                           "id=\"best\"", "id=\"config\"", "search.policy=uct", "<b>8.00x</b>", "found at evaluation 12",
                           "step 11", "class=\"add\">+int block() { return 11; }", "class=\"del\">-int block() { return 0; }"})
    CHECK_MESSAGE(html.find(part) != std::string::npos, part);
  CHECK(html.find("GPU time 6 s") != std::string::npos);  // 12 evaluations of 0.5 s, on the cuda evaluator
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("<link") == std::string::npos);
  CHECK(html.find(" src=") == std::string::npos);
  CHECK(html_escape("<a href=\"x\">&'") == "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
  fs::remove_all(out);
}
