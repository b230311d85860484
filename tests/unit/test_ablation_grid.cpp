// Ablation grid files: expansion into configurations and runs, the run configs, and every
// error that stops a grid before it runs.
#include <doctest/doctest.h>

#include <fstream>
#include <set>

#include "campaigns/ablation_grid.hpp"
#include "core/error.hpp"
#include "scratch.hpp"

using namespace kmcts;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::string kMatmul = std::string(KMCTS_SOURCE_DIR) + "/problems/cpu/matmul";
const std::string kLandscape = std::string(KMCTS_SOURCE_DIR) + "/bench/search_quality/recorded/matmul-devbox";

// A two-axis grid on the synthetic evaluator (nothing to compile or find on disk).
json sample_grid() {
  return json::parse(R"({
    "name": "sample",
    "base": {"set": {"evaluator.name": "synthetic", "search.workers": 2}},
    "axes": [
      {"name": "policy", "values": [
        {"name": "uct",  "set": {"search.strategy": "mcts", "search.policy": "uct"}},
        {"name": "beam", "set": ["search.strategy=beam"]}]},
      {"name": "c", "key": "search.exploration", "values": [0.5, 1, 2]}
    ],
    "exclude": [{"policy": "beam", "c": "1"}, {"policy": "beam", "c": "2"}],
    "seeds": [3, 4],
    "budget": 12,
    "baseline": {"policy": "uct", "c": "1"}
  })");
}

fs::path write_grid(const json& grid, const std::string& name = "grid") {
  const fs::path dir = kmcts::test::fresh_dir("ablation-grid-" + name);
  fs::create_directories(dir);
  json g = grid;
  if (!g.contains("problems")) g["problems"] = {kMatmul};
  std::ofstream(dir / "grid.json") << g.dump(2);
  return dir / "grid.json";
}

AblationGrid load(const json& grid) { return load_ablation_grid(write_grid(grid)); }

void check_error(const json& grid, const std::string& expected) {
  CAPTURE(expected);
  CHECK_THROWS_WITH_AS(load(grid), doctest::Contains(expected.c_str()), InputError);
}

}  // namespace

TEST_CASE("ablation grid: axes expand in order, excluded combinations are left out, runs are config x problem x seed") {
  const AblationGrid g = load(sample_grid());
  std::vector<std::string> names;
  for (const auto& c : g.configs) names.push_back(c.name);
  CHECK(names == std::vector<std::string>{"policy=uct,c=0.5", "policy=uct,c=1", "policy=uct,c=2", "policy=beam,c=0.5"});
  CHECK(g.baseline == "policy=uct,c=1");
  REQUIRE(g.runs.size() == 8);
  CHECK(g.runs[0].run_id == "policy=uct+c=0.5--matmul--s3");
  CHECK(g.runs[7].run_id == "policy=beam+c=0.5--matmul--s4");
  CHECK(g.axis_values(g.configs[3]).dump() == R"({"policy":"beam","c":"0.5"})");
  CHECK(g.overrides(g.configs[3]).size() == 2);
  CHECK(g.identity()["seeds"] == json{3, 4});
}

TEST_CASE("ablation grid: a run's config is deterministic, seeded, budgeted, and measures through the replay evaluator") {
  const AblationGrid g = load(sample_grid());
  const Config c = g.run_config(g.runs[1], {{"/x/finished-run"}, "/x/runs/r"});
  CHECK(c.get_bool("search.deterministic"));
  CHECK(c.get_int("search.seed") == 4);
  CHECK(c.get_int("search.budget") == 12);
  CHECK(c.get_double("search.exploration") == 0.5);
  CHECK(c.get_string("evaluator.name") == "replay");
  CHECK(c.get_string("evaluator.replay.fallback") == "synthetic");  // the base's evaluator measures what is new
  CHECK(c.get_string("evaluator.replay.runs") == "/x/finished-run");
  CHECK(c.get_string("agents.llm.cassette_mode") == "off");  // rule agents: no cassette

  // A base that already replays a recorded landscape keeps it (and no fallback), adding the grid's runs.
  json landscape = sample_grid();
  landscape["base"]["set"] = {{"evaluator.name", "replay"}, {"evaluator.replay.runs", kLandscape}};
  const AblationGrid r = load(landscape);
  const Config rc = r.run_config(r.runs[0], {{"/x/a", "/x/b"}, "/x/runs/r"});
  CHECK(rc.get_string("evaluator.replay.runs") == kLandscape + ",/x/a,/x/b");
  CHECK(rc.get_string("evaluator.replay.fallback").empty());
  CHECK_FALSE(r.measures_for_real());
  CHECK(g.measures_for_real());

  // LLM agents record one cassette per run directory; --replay-only replays it and nothing else.
  json llm = sample_grid();
  llm["base"]["set"]["agents.backend"] = "llm";
  const AblationGrid l = load(llm);
  const Config lc = l.run_config(l.runs[0], {{}, "/x/runs/r"});
  CHECK(lc.get_string("agents.llm.cassette") == "/x/runs/r/cassette.jsonl");
  CHECK(lc.get_string("agents.llm.cassette_mode") == "record");
  const Config offline = offline_replay_config(lc.to_json(), "/x/runs/r");
  CHECK(offline.get_string("agents.llm.cassette_mode") == "replay");
  CHECK(offline.get_string("evaluator.replay.runs") == "/x/runs/r");
  CHECK(offline.get_string("evaluator.replay.fallback").empty());
}

TEST_CASE("ablation grid: problems are found beside the grid file or in a folder above it, with their recorded runs") {
  const fs::path dir = kmcts::test::fresh_dir("ablation-grid-paths");
  fs::create_directories(dir / "configs" / "ablations");
  fs::create_directories(dir / "problems");
  fs::copy(kMatmul, dir / "problems" / "matmul", fs::copy_options::recursive);
  json grid = sample_grid();
  grid["problems"] = {{{"path", "problems/matmul"}, {"recorded", {kLandscape}}}};
  std::ofstream(dir / "configs" / "ablations" / "g.json") << grid.dump();
  const AblationGrid g = load_ablation_grid(dir / "configs" / "ablations" / "g.json");
  CHECK(g.problems[0].path == fs::weakly_canonical(dir / "problems" / "matmul"));
  CHECK(g.run_config(g.runs[0], {}).get_string("evaluator.replay.runs") == kLandscape);
  fs::remove_all(dir);
}

TEST_CASE("ablation grid: every mistake is an error naming the culprit, before anything runs") {
  json g = sample_grid();
  g["seed"] = 1;
  check_error(g, "unknown key 'seed' in the grid");

  g = sample_grid();
  g["axes"][0]["values"][0]["set"]["search.polcy"] = "uct";
  check_error(g, "unknown option 'search.polcy' (did you mean 'search.policy'?)");

  g = sample_grid();
  g["axes"][1]["values"] = {0.5, 1, 2, -1};
  check_error(g, "option 'search.exploration' must be >= 0");

  g = sample_grid();
  g["axes"][0]["values"][0]["set"]["search.policy"] = "uctt";
  check_error(g, "configuration 'policy=uct,c=0.5'");

  g = sample_grid();
  g["axes"].push_back(json::parse(R"({"name": "p2", "values": [{"name": "puct", "set": {"search.policy": "puct"}}]})"));
  g["baseline"] = nullptr;
  check_error(g, "axis 'policy' sets search.policy=\"uct\" but axis 'p2' sets it to \"puct\"");

  g = sample_grid();
  g["axes"][0]["values"][1]["name"] = "uct";
  check_error(g, "axis 'policy': two values are named 'uct'");

  g = sample_grid();
  g["axes"][1]["name"] = "policy";
  check_error(g, "two axes are named 'policy'");

  g = sample_grid();
  g["seeds"] = {1, 1};
  check_error(g, "seed 1 is listed twice");

  g = sample_grid();
  g["baseline"] = "policy=beam,c=1";
  check_error(g, "baseline 'policy=beam,c=1' is not a configuration");

  g = sample_grid();
  g["problems"] = {kMatmul, std::string(KMCTS_SOURCE_DIR) + "/configs"};
  check_error(g, "does not load");

  g = sample_grid();
  g["problems"] = {kMatmul, kMatmul};
  check_error(g, "two problems are named 'matmul'");

  g = sample_grid();
  g["problems"] = {"no/such/problem"};
  check_error(g, "problem 'no/such/problem' not found");

  g = sample_grid();
  g["axes"][0]["values"][0]["set"]["search.seed"] = 5;
  check_error(g, "'search.seed' is set by kmcts ablate itself");

  g = sample_grid();
  g["exclude"].push_back({{"policy", "random"}});
  check_error(g, "exclude #3: axis 'policy' has no value \"random\"");

  g = sample_grid();
  g["exclude"] = json::array();  // beam's three constants are one search under three names
  check_error(g, "configurations 'policy=beam,c=0.5' and 'policy=beam,c=1' run the same search: axis 'c' value '1' sets "
                 "search.exploration, which has no effect there (search.strategy=beam never reads it; only mcts does)");

  g = sample_grid();
  g["axes"][1] = json::parse(R"({"name": "pending", "key": "search.pending", "values": ["wu_uct", "none"]})");
  g["exclude"] = json::array();
  g["baseline"] = nullptr;
  check_error(g, "search.pending, which has no effect there (search.strategy=beam never reads it");

  CHECK_THROWS_WITH_AS(load_ablation_grid("/no/such/grid.json"), doctest::Contains("cannot be read"), InputError);
}

TEST_CASE("ablation grid: options that the chosen parts never read") {
  Config c;
  c.set_value("search.strategy", "beam", "test");
  CHECK(ineffective_option("search.pending", c).find("search.strategy=beam") != std::string::npos);
  CHECK(ineffective_option("search.beam.width", c).empty());
  CHECK(ineffective_option("search.budget", c).empty());
  for (const char* mcts_only : {"search.exploration_schedule", "search.anneal_selections", "search.refine",
                                "search.refine_discount", "search.chain_length", "search.chain", "search.expansion_prior",
                                "search.value_scale"})
    CHECK(ineffective_option(mcts_only, c).find("search.strategy=beam") != std::string::npos);
  c.set_value("search.strategy", "mcts", "test");
  c.set_value("search.refine", "off", "test");
  CHECK(ineffective_option("search.refine_prior", c).find("search.refine=off") != std::string::npos);
  c.set_value("search.exploration_schedule", "constant", "test");
  CHECK(ineffective_option("search.anneal_selections", c).find("search.exploration_schedule=constant") != std::string::npos);
  CHECK(ineffective_option("search.refine", c).empty());
  c.set_value("search.expansion", "compare", "test");
  CHECK(ineffective_option("search.expansion_prior", c).find("only thompson") != std::string::npos);
  CHECK(ineffective_option("search.expansion_planner", c).find("only thompson") != std::string::npos);
  c.set_value("search.expansion", "thompson", "test");
  CHECK(ineffective_option("search.expansion_prior", c).empty());
  c.set_value("search.policy", "uct", "test");
  CHECK(ineffective_option("search.puct.c", c).find("only puct") != std::string::npos);
  CHECK(ineffective_option("search.exploration", c).empty());
  CHECK(ineffective_option("search.widening_alpha", c).find("search.widening=fixed") != std::string::npos);
  CHECK(ineffective_option("agents.llm.model", c) == "no agent is an LLM agent");
}

TEST_CASE("ablation grid: every shipped grid expands and passes its checks") {
  for (const auto& entry : fs::directory_iterator(std::string(KMCTS_SOURCE_DIR) + "/configs/ablations")) {
    CAPTURE(entry.path().string());
    const AblationGrid g = load_ablation_grid(entry.path());
    CHECK(g.runs.size() == g.configs.size() * g.problems.size() * g.seeds.size());
    CHECK(g.name == entry.path().stem().string());
  }
  const AblationGrid policy = load_ablation_grid(std::string(KMCTS_SOURCE_DIR) + "/configs/ablations/policy.json");
  CHECK(policy.configs.size() == 8);
  CHECK(policy.problems[0].recorded.size() == 1);  // matmul replays its recorded landscape
}

TEST_CASE("ablation grid: its identity holds the base options it sets, not every default") {
  // An option kmcts adds later, with its default, must not make an existing grid folder
  // "another grid"; the recorded landscapes count by content.
  const AblationGrid ci = load_ablation_grid(std::string(KMCTS_SOURCE_DIR) + "/configs/ablations/ci.json");
  const auto identity = ci.identity();
  // ci.json also sets search.workers=2, the default: not a change.
  CHECK(identity["base_config"] == nlohmann::json::parse(R"({"evaluator": {"name": "replay"}})"));
  const auto& recorded = identity["problems"][0]["recorded"];
  REQUIRE(recorded.size() == 1);
  CHECK(recorded[0].get<std::string>().size() == 64);  // the sha256 of matmul-devbox's run.sqlite
}

TEST_CASE("ablation grid: a run reads the optimisation archive only where the grid sets agents.memory.k") {
  // The archive changes as the grid's runs end: read by default, a run would depend on which
  // runs ended before it.
  CHECK(Config().get_int("agents.memory.k") == 5);  // kmcts run's default
  const AblationGrid plain = load(sample_grid());
  CHECK(plain.run_config(plain.runs[0], {}).get_int("agents.memory.k") == 0);
  json base = sample_grid();
  base["base"]["set"]["agents.memory.k"] = 5;
  const AblationGrid in_base = load(base);
  CHECK(in_base.run_config(in_base.runs[0], {}).get_int("agents.memory.k") == 5);
  json axis = sample_grid();
  axis["axes"][1] = {{"name", "k"}, {"key", "agents.memory.k"}, {"values", {0, 3}}};
  axis.erase("exclude");
  axis["baseline"] = {{"policy", "uct"}, {"k", "0"}};
  const AblationGrid by_axis = load(axis);
  std::set<int64_t> ks;
  for (const auto& run : by_axis.runs) ks.insert(by_axis.run_config(run, {}).get_int("agents.memory.k"));
  CHECK(ks == std::set<int64_t>{0, 3});
}
