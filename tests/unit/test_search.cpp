// Whole searches on the synthetic evaluator: budgets, the store, branching, determinism.
#include <doctest/doctest.h>

#include <sqlite3.h>

#include <filesystem>
#include <optional>
#include <set>
#include <thread>

#include "core/error.hpp"
#include "agents/llm/mock_server.hpp"
#include "core/problem.hpp"
#include "hardware/evaluator.hpp"
#include "scratch.hpp"
#include "search/coordinator.hpp"
#include "search/replay.hpp"
#include "search/run_search.hpp"
#include "search/run_store.hpp"
#include "core/cpus.hpp"

using namespace kmcts;
namespace fs = std::filesystem;

namespace {

using test::fresh_dir;

nlohmann::json search(const fs::path& run_dir, int budget, int workers, int seed, double failure_rate = 0.15,
                      bool deterministic = false, const char* extra = nullptr) {
  RunRequest r;
  if (extra) r.config.set(extra);
  r.problem_dir = fs::path(KMCTS_SOURCE_DIR) / "tests/fixtures/synthetic_space";
  r.config.set("evaluator.name=synthetic");
  r.config.set_value("evaluator.synthetic.failure_rate", failure_rate, "test");
  r.config.set_value("search.budget", budget, "test");
  r.config.set_value("search.workers", workers, "test");
  r.config.set_value("search.seed", seed, "test");
  r.config.set_value("search.deterministic", deterministic, "test");
  r.run_dir = run_dir;
  r.progress = false;
  return run_search(r);
}

// The graph as the order in which nodes and edges appeared: what determinism must repeat.
std::vector<std::string> trace(const fs::path& run_dir) {
  auto store = RunStore::open(run_dir);
  std::vector<std::string> out;
  for (const auto& n : store->nodes()) out.push_back("node " + std::to_string(n.id) + " " + n.hash + " " + n.verdict);
  for (const auto& e : store->edges())
    out.push_back("edge " + std::to_string(e.parent) + "->" + std::to_string(e.child) + " " + e.plan);
  for (const auto& e : store->events()) out.push_back("event " + e.kind);
  return out;
}

}  // namespace

TEST_CASE("search: spends exactly its budget and the store holds every evaluation it counts") {
  auto dir = fresh_dir("budget");
  auto summary = search(dir, 25, 3, 1);
  CHECK(summary["status"] == "completed");
  CHECK(summary["evaluations"] == 25);
  auto store = RunStore::open(dir);
  CHECK(store->evaluations(false).size() == 25);
  CHECK(fs::exists(dir / "summary.json"));
  CHECK(store->summary()->at("evaluations") == 25);
  std::set<std::string> hashes;
  int failed = 0;
  for (const auto& n : store->nodes()) {
    CHECK(hashes.insert(n.hash).second);  // one node per source
    CHECK(n.status != NodeStatus::pending);
    CHECK(store->source(n.hash).has_value());
    failed += n.status == NodeStatus::failed;
  }
  CHECK(summary["failures"] == failed);
  // The fixed branching limit holds for planner expansions.
  std::map<int, int> expansions;
  for (const auto& e : store->edges())
    if (e.kind == EdgeKind::expand) expansions[e.parent]++;
  for (const auto& [parent, count] : expansions) CHECK(count <= 4);
  CHECK(summary["best"]["speedup"].get<double>() >= 1.0);  // the seed itself scores 1
  // The coordinator's marks: at the start and at every tenth of the evaluations, each with the
  // events, CPU seconds, wall seconds and sleeps so far (none decreasing).
  const auto& marks = summary.at("coordinator_cpu_marks");
  REQUIRE(marks.size() == 11);
  for (size_t i = 1; i < marks.size(); ++i)
    for (size_t k = 0; k < 4; ++k) CHECK(marks[i][k].get<double>() >= marks[i - 1][k].get<double>());
  CHECK(marks.back()[0].get<size_t>() <= store->events().size());
  CHECK(marks.back()[1].get<double>() <= summary["coordinator_cpu_seconds"].get<double>());
  // The store writer's thread did the run's writes (the source files among them), and the run
  // waited for its backlog before the summary: both within the run's wall time.
  CHECK(summary["store_writer_cpu_seconds"].get<double>() > 0);
  CHECK(summary["store_writer_drain_seconds"].get<double>() >= 0);
  CHECK(summary["store_writer_drain_seconds"].get<double>() <= summary["wall_seconds"].get<double>());
  fs::remove_all(dir);
}

TEST_CASE("search settings: no more compile or measurement slots than trials in flight") {
  Config c;
  c.set("search.workers=3");
  c.set("search.compile_slots=16");
  c.set("search.measure_slots=8");
  SearchSettings s = SearchSettings::from_config(c);
  CHECK(s.compile_slots == 3);
  CHECK(s.measure_slots == 3);
  c.set("search.compile_slots=2");
  CHECK(SearchSettings::from_config(c).compile_slots == 2);
  // Lockstep waves put wave_size trials in flight, whatever the workers.
  c.set("search.deterministic=true");
  c.set("search.wave_size=6");
  c.set("search.compile_slots=0");
  s = SearchSettings::from_config(c);
  CHECK(s.trials_at_once() == 6);
  CHECK(s.compile_slots == std::min(6, usable_cpus()));
}

TEST_CASE("search: a single-worker run with a seed repeats exactly") {
  auto a = fresh_dir("det-a"), b = fresh_dir("det-b"), c = fresh_dir("det-c");
  search(a, 20, 1, 5, 0.3);
  search(b, 20, 1, 5, 0.3);
  search(c, 20, 1, 6, 0.3);
  CHECK(trace(a) == trace(b));
  CHECK(trace(a) != trace(c));
  for (const auto& d : {a, b, c}) fs::remove_all(d);
}

TEST_CASE("search: failed variants go to the debugger") {
  auto dir = fresh_dir("debug");
  search(dir, 30, 2, 3, 0.5);
  auto store = RunStore::open(dir);
  int debug_jobs = 0;
  for (const auto& e : store->events())
    if ((e.kind == "child" || e.kind == "agent_failed") && e.payload.value("kind", "") == "debug") ++debug_jobs;
  CHECK(debug_jobs > 0);
  fs::remove_all(dir);
}

TEST_CASE("search: unknown implementation names are input errors listing the known ones") {
  RunRequest r;
  r.problem_dir = fs::path(KMCTS_SOURCE_DIR) / "tests/fixtures/synthetic_space";
  r.config.set("evaluator.name=quantum");
  r.run_dir = fresh_dir("unknown");
  r.progress = false;
  CHECK_THROWS_WITH_AS(run_search(r), doctest::Contains("unknown evaluator 'quantum' (known: cpu, cuda, hip, kernelbench, replay, synthetic)"),
                       InputError);
  CHECK_FALSE(fs::exists(r.run_dir));  // nothing was written
  r.config.set("evaluator.name=synthetic");
  r.config.set("agents.backend=gpt");
  CHECK_THROWS_WITH_AS(run_search(r), doctest::Contains("agents.backend: unknown backend 'gpt' (known: rule, sim, llm, submissions)"), InputError);
  CHECK_FALSE(fs::exists(r.run_dir));
}

TEST_CASE("search: the first budget reached stops the search cleanly") {
  auto dir = fresh_dir("agent-budget");
  RunRequest r;
  r.problem_dir = fs::path(KMCTS_SOURCE_DIR) / "tests/fixtures/synthetic_space";
  r.config.set("evaluator.name=synthetic");
  r.config.set("search.budget=30");
  r.config.set("search.workers=1");
  r.config.set("search.max_agent_calls=7");
  r.run_dir = dir;
  r.progress = false;
  auto summary = run_search(r);
  CHECK(summary["status"] == "completed");
  CHECK(summary["agent_calls"] == 7);
  CHECK(summary["message"] == "agent-call budget reached");
  CHECK(summary["evaluations"].get<int>() <= 8);  // the seed plus at most one per agent call
  auto store = RunStore::open(dir);
  for (const auto& n : store->nodes()) CHECK(n.status != NodeStatus::pending);  // in-flight work finished
  fs::remove_all(dir);
}

TEST_CASE("search: deterministic mode gives the same graph with 1 and 4 workers") {
  auto one = fresh_dir("lockstep-1"), four = fresh_dir("lockstep-4");
  auto a = search(one, 30, 1, 11, 0.3, true);
  auto b = search(four, 30, 4, 11, 0.3, true);
  CHECK(a["evaluations"] == b["evaluations"]);
  CHECK(trace(one) == trace(four));
  CHECK(a["best"]["hash"] == b["best"]["hash"]);
  fs::remove_all(one);
  fs::remove_all(four);
}

TEST_CASE("replay: a search whose choices read the Planner's queued plans replays them (expansion=thompson)") {
  // The rule planner proposes 4 plans a call: 3 are queued, and the next expansion of a node
  // takes one, so its share (NodeRecord::next_plan_share) must be rebuilt from the events for
  // every descent to choose again as it did (failed calls that queue plans: the next test).
  for (int workers : {1, 3}) {
    CAPTURE(workers);
    auto dir = fresh_dir("replay-thompson-" + std::to_string(workers));
    search(dir, 40, workers, 9, 0.3, false, "search.expansion=thompson");
    ReplayReport r = replay_run(dir);
    INFO(r.mismatch);
    CHECK(r.identical);
    CHECK(r.nodes > 15);
    fs::remove_all(dir);
  }
}

TEST_CASE("replay: a failed Coder call's plan prior and spare plans are rebuilt, and logs without the prior still replay") {
  // An LLM Planner (a mock server) proposes three plans with priors; the Coder's replies hold no
  // code, so every call fails after its plan was taken: agent_failed events carrying the taken
  // plan's prior and the spare plans that later expansions take (their shares are queued from
  // both). A replay must rebuild those events as recorded.
  llm::MockLlmServer server(0, [](const std::string&, const std::string&, const std::string& user) -> std::string {
    if (user.find("Propose") != std::string::npos) return "1. [0.6] tile the loop\n2. [0.3] unroll it\n3. [0.1] vectorise\n";
    return "I would rather not write this kernel.";
  });
  auto dir = fresh_dir("replay-failed-coder");
  RunRequest r;
  r.problem_dir = fs::path(KMCTS_SOURCE_DIR) / "tests/fixtures/synthetic_space";
  for (const char* set : {"evaluator.name=synthetic", "agents.backend=llm", "agents.llm.api_key_env=KMCTS_TEST_NO_SUCH_VARIABLE",
                          "agents.plans_per_call=3", "search.expansion=thompson", "search.budget=6", "search.workers=1"})
    r.config.set(set);
  r.config.set_value("agents.llm.base_url", server.base_url(), "test");
  r.run_dir = dir;
  r.progress = false;
  run_search(r);
  int with_spares = 0, taken_prior_not_one = 0;
  for (const auto& e : RunStore::open(dir)->events())
    if (e.kind == "agent_failed") {
      with_spares += e.payload.value("spare_plans", nlohmann::json::array()).size() > 0;
      taken_prior_not_one += e.payload.contains("prior") && e.payload["prior"].get<double>() != 1.0;
    }
  CHECK(with_spares > 0);
  CHECK(taken_prior_not_one > 0);
  ReplayReport replayed = replay_run(dir);
  INFO(replayed.mismatch);
  CHECK(replayed.identical);
  // A log written before agent_failed events recorded the prior replays too: the replay takes
  // the default, which only search.expansion=thompson reads (and no descent here reached a node
  // with children, where it would), and does not hold the missing field against the log.
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open((dir / "run.sqlite").c_str(), &db) == SQLITE_OK);
  CHECK(sqlite3_exec(db, "UPDATE events SET payload = json_remove(payload, '$.prior') WHERE kind = 'agent_failed'", nullptr,
                     nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
  for (const auto& e : RunStore::open(dir)->events()) CHECK_FALSE((e.kind == "agent_failed" && e.payload.contains("prior")));
  ReplayReport old_log = replay_run(dir);
  INFO(old_log.mismatch);
  CHECK(old_log.identical);
  fs::remove_all(dir);
}

TEST_CASE("replay: the event log rebuilds the stored graph; a tampered store is caught") {
  for (int workers : {1, 3}) {
    CAPTURE(workers);
    auto dir = fresh_dir("replay-" + std::to_string(workers));
    search(dir, 30, workers, 4, 0.3);
    ReplayReport r = replay_run(dir);
    INFO(r.mismatch);
    CHECK(r.identical);
    CHECK(r.nodes > 10);
    if (workers == 3) {
      // Change one recorded measurement: the rebuilt rewards and values must differ.
      auto store = RunStore::open(dir);
      EvaluationRecord evaluation;
      for (const auto& e : store->evaluations(false))
        if (e.result.ok() && e.node > 0) evaluation = e;
      sqlite3* db = nullptr;
      REQUIRE(sqlite3_open((dir / "run.sqlite").c_str(), &db) == SQLITE_OK);
      std::string sql = "UPDATE evaluations SET speedup = speedup * 3, cand_median_ns = cand_median_ns / 3 WHERE seq = " +
                        std::to_string(evaluation.seq);
      CHECK(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK);
      sqlite3_close(db);
      ReplayReport tampered = replay_run(dir);
      CHECK_FALSE(tampered.identical);
      CHECK(tampered.mismatch.find("event") != std::string::npos);
    }
    fs::remove_all(dir);
  }
}

TEST_CASE("replay evaluator: recorded measurements re-run a search without hardware; misses are explicit") {
  auto recorded = fresh_dir("rec"), replayed = fresh_dir("rep"), missing = fresh_dir("miss"), fallback = fresh_dir("fb");
  search(recorded, 25, 1, 3, 0.3);
  auto run_replay = [&](const fs::path& out, int seed, const std::string& fallback_name) {
    RunRequest r;
    r.problem_dir = fs::path(KMCTS_SOURCE_DIR) / "tests/fixtures/synthetic_space";
    r.config.set("evaluator.name=replay");
    r.config.set_value("evaluator.replay.runs", recorded.string(), "test");
    r.config.set_value("evaluator.replay.fallback", fallback_name, "test");
    r.config.set("evaluator.synthetic.failure_rate=0.3");
    r.config.set("search.budget=25");
    r.config.set("search.workers=1");
    r.config.set_value("search.seed", seed, "test");
    r.run_dir = out;
    r.progress = false;
    return run_search(r);
  };
  run_replay(replayed, 3, "");
  CHECK(trace(replayed) == trace(recorded));  // same seed: the same graph, from the archive alone
  auto miss = run_replay(missing, 4, "");
  CHECK(miss["failures_by_verdict"].value("infra_error", 0) > 0);
  bool named = false;
  for (const auto& e : RunStore::open(missing)->evaluations(false))
    named |= e.result.message.find("replay miss: no recorded run of 'synthetic_space' measured source") == 0;
  CHECK(named);
  auto filled = run_replay(fallback, 4, "synthetic");  // misses measured by the synthetic evaluator
  CHECK(filled["failures_by_verdict"].value("infra_error", 0) == 0);
  // Recorded infrastructure errors (here the misses, renamed as a harness failure) are no
  // measurements: answered as recorded only with evaluator.replay.infra_errors, for a run re-run
  // from its own record (kmcts ablate --replay-only).
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open((missing / "run.sqlite").c_str(), &db) == SQLITE_OK);
  CHECK(sqlite3_exec(db, "UPDATE evaluations SET message = 'the harness died' WHERE verdict = 'infra_error'", nullptr,
                     nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
  std::optional<std::string> failed_source;
  {
    auto store = RunStore::open(missing);
    for (const auto& n : store->nodes())
      if (n.verdict == "infra_error" && !failed_source) failed_source = store->source(n.hash);
  }
  REQUIRE(failed_source);
  const Problem problem = load_problem(fs::path(KMCTS_SOURCE_DIR) / "tests/fixtures/synthetic_space");
  for (bool infra_errors : {true, false}) {
    Config c;
    c.set_value("evaluator.replay.runs", missing.string(), "test");
    c.set_value("evaluator.replay.infra_errors", infra_errors, "test");
    const EvalResult r = EvaluatorRegistry::instance().create("evaluator", "replay", problem, c)->evaluate(*failed_source);
    CHECK(r.verdict == Verdict::infra_error);
    CHECK((r.message == "the harness died") == infra_errors);
  }
  for (const auto& d : {recorded, replayed, missing, fallback}) fs::remove_all(d);
}

TEST_CASE("search: agent slots bound agent calls; with fewer than workers, agents run while earlier variants measure") {
  auto run = [](const fs::path& dir, int workers, int agent_slots) {
    RunRequest r;
    r.problem_dir = fs::path(KMCTS_SOURCE_DIR) / "tests/fixtures/synthetic_space";
    r.config.set("evaluator.name=synthetic");
    r.config.set_value("evaluator.synthetic.failure_rate", 0.0, "test");
    r.config.set_value("evaluator.synthetic.latency_ms", 30, "test");  // measurements dominate
    r.config.set_value("search.budget", 12, "test");
    r.config.set_value("search.workers", workers, "test");
    r.config.set_value("search.agent_slots", agent_slots, "test");
    r.run_dir = dir;
    r.progress = false;
    CHECK(run_search(r)["evaluations"] == 12);
    // Replays the log: agent calls in flight (select .. child/agent_failed) and evaluations
    // pending (new child .. evaluation), at every event.
    int agents = 0, max_agents = 0, pending = 1, selects_while_measuring = 0;
    for (const auto& e : RunStore::open(dir)->events()) {
      if (e.kind == "select") {
        selects_while_measuring += pending > 0;
        max_agents = std::max(max_agents, ++agents);
      }
      if (e.kind == "child" || e.kind == "agent_failed") --agents;
      if (e.kind == "child" && e.payload.at("new_node").get<bool>()) ++pending;
      if (e.kind == "evaluation") --pending;
    }
    CHECK(agents == 0);
    CHECK(pending == 0);
    fs::remove_all(dir);
    return std::pair{max_agents, selects_while_measuring};
  };
  auto [overlap_agents, overlapped] = run(fresh_dir("slots-overlap"), 3, 1);
  CHECK(overlap_agents == 1);
  CHECK(overlapped > 0);
  auto [serial_agents, serial_overlapped] = run(fresh_dir("slots-serial"), 1, 0);  // 0 = search.workers
  CHECK(serial_agents == 1);
  CHECK(serial_overlapped == 0);  // one worker keeps its slot until its evaluation is done
}

TEST_CASE("compare_events: the first differing payload field is named; wall times and LLM transport are not compared") {
  using nlohmann::json;
  auto child = [](json llm_call, double seconds, json plan) {
    return EventRecord{7, seconds, "child",
                       {{"child", 1}, {"plan", plan}, {"agent_seconds", seconds}, {"usage", {{"calls", 1}, {"retries", 2}}},
                        {"llm_calls", json::array({llm_call})}}};
  };
  const json recorded_call = {{"role", "planner"}, {"attempts", 3}, {"cassette", "recorded"}, {"errors", {"429"}}, {"seconds", 4.0}};
  const json replayed_call = {{"role", "planner"}, {"attempts", 0}, {"cassette", "hit"}, {"errors", json::array()}, {"seconds", 0.0}};
  const std::vector<EventRecord> recorded = {child(recorded_call, 9.0, "ROWS 1 -> 2")};
  CHECK(compare_events({child(replayed_call, 0.1, "ROWS 1 -> 2")}, recorded).empty());
  CHECK(compare_events({child(replayed_call, 0.1, "ROWS 1 -> 4")}, recorded) ==
        "event 7 (child): /plan is \"ROWS 1 -> 4\" rebuilt, \"ROWS 1 -> 2\" recorded");
  json other_role = replayed_call;
  other_role["role"] = "coder";
  CHECK(compare_events({child(other_role, 0.1, "ROWS 1 -> 2")}, recorded).find("/llm_calls/0/role") != std::string::npos);
}
