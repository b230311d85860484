// Exports of a stored run (JSON, CSV, DOT accepted by Graphviz, SVG) and the end-of-run
// summary table.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/error.hpp"
#include "core/hash.hpp"
#include "search/export.hpp"
#include "search/run_store.hpp"
#include "search/summary_table.hpp"

namespace kmcts {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct ExportTempDir {
  fs::path path;
  ExportTempDir() {
    std::string tmpl = (fs::temp_directory_path() / "kmcts-export-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~ExportTempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

NodeRecord make_node(int id, NodeStatus status, double speedup, std::string verdict) {
  NodeRecord n;
  n.id = id;
  n.hash = sha256_hex("variant " + std::to_string(id));
  n.status = status;
  n.verdict = std::move(verdict);
  n.speedup = speedup;
  return n;
}

EdgeRecord make_edge(int parent, int child, EdgeKind kind, bool transposition, std::string plan) {
  EdgeRecord e;
  e.parent = parent;
  e.child = child;
  e.kind = kind;
  e.transposition = transposition;
  e.plan = std::move(plan);
  return e;
}

// The tree:   0 (seed, 1.0x) -> 1 (2.0x) -> 4 (pending)
//             0 -> 2 (compile_error) -debug-> 3 (3.5x, best)
//             1 -> 3 is a transposition (3 already existed).
// Best path: 0 -> 2 -> 3 (3's first non-transposition parent is 2).
std::unique_ptr<RunStore> sample_run(const fs::path& dir) {
  auto store = RunStore::create(dir, {{"problem", "matmul"}}, {{"budget", 5}});
  RunStore::Transaction tx(*store);
  store->add_node(make_node(0, NodeStatus::ok, 1.0, "ok"));
  store->add_node(make_node(1, NodeStatus::ok, 2.0, "ok"));
  store->add_node(make_node(2, NodeStatus::failed, 0, "compile_error"));
  store->add_node(make_node(3, NodeStatus::ok, 3.5, "ok"));
  store->add_node(make_node(4, NodeStatus::pending, 0, ""));
  store->add_edge(make_edge(0, 1, EdgeKind::expand, false, "TILE 16 -> 32"));
  store->add_edge(make_edge(0, 2, EdgeKind::expand, false, "use \"vector\" loads\\n, then\nmore"));
  store->add_edge(make_edge(2, 3, EdgeKind::debug, false, "repair: missing semicolon"));
  store->add_edge(make_edge(1, 3, EdgeKind::expand, true, "UNROLL 1 -> 4"));
  store->add_edge(make_edge(1, 4, EdgeKind::expand, false, "ÄÖÜ äöü ÄÖÜ äöü ÄÖÜ äöü ÄÖÜ äöü ÄÖÜ äöü"));
  EvaluationRecord ev;
  ev.node = 1;
  ev.result.verdict = Verdict::ok;
  ev.result.candidate = TimingStats::from_samples({10, 11, 12});
  ev.result.reference = TimingStats::from_samples({20, 22, 24});
  ev.result.speedup = 2.0;
  store->add_evaluation(ev);
  tx.commit();
  return store;
}

// A strict RFC 4180 reader, written from the RFC so the test does not trust the writer's
// idea of quoting: records end in CRLF; a quoted field may hold commas, CRLF and "" (a quote).
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1, std::vector<std::string>(1));
  for (size_t i = 0; i < text.size(); ++i) {
    std::string& field = rows.back().back();
    const char c = text[i];
    if (c == '"' && field.empty()) {
      for (++i; i < text.size() && !(text[i] == '"' && text.substr(i, 2) != "\"\""); ++i) {
        field += text[i];
        if (text[i] == '"') ++i;  // the second quote of a doubled pair
      }
    } else if (c == ',') {
      rows.back().emplace_back();
    } else if (text.compare(i, 2, "\r\n") == 0) {
      rows.emplace_back(1);
      ++i;
    } else {
      REQUIRE_MESSAGE((c != '"' && c != '\n' && c != '\r'), "unquoted special character at ", i);
      field += c;
    }
  }
  REQUIRE(rows.back() == std::vector<std::string>{""});  // the text ends with a record's CRLF
  rows.pop_back();
  return rows;
}

// The attribute list of DOT statement `head` ("3" or "0->2"), "" if absent.
std::string dot_attrs(const std::string& dot, const std::string& head) {
  std::istringstream in(dot);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(head + "[", 0) == 0 || line.rfind(head + " [", 0) == 0) return line;
  return "";
}

}  // namespace

TEST_CASE("export: best node and the path to it") {
  const std::vector<NodeRecord> nodes = {make_node(0, NodeStatus::ok, 1.0, "ok"),
                                         make_node(1, NodeStatus::ok, 2.0, "ok"),
                                         make_node(2, NodeStatus::failed, 9.0, "wrong_answer"),
                                         make_node(3, NodeStatus::ok, 2.0, "ok")};
  CHECK(best_node(nodes) == 1);  // failed nodes never count; ties go to the lower id
  CHECK_FALSE(best_node({make_node(0, NodeStatus::failed, 0, "crash")}).has_value());
  const std::vector<EdgeRecord> edges = {make_edge(0, 1, EdgeKind::expand, false, ""),
                                         make_edge(2, 3, EdgeKind::expand, true, ""),
                                         make_edge(1, 3, EdgeKind::expand, false, ""),
                                         make_edge(0, 3, EdgeKind::expand, false, "")};
  CHECK(path_to(3, edges) == std::vector<int>{0, 1, 3});
  CHECK(path_to(0, edges) == std::vector<int>{0});
}

TEST_CASE("export: JSON holds run, config, nodes, edges, evaluations without samples, summary") {
  ExportTempDir tmp;
  auto store = sample_run(tmp.path);
  json j = export_json(*store);
  CHECK(j["run"]["problem"] == "matmul");
  CHECK(j["config"]["budget"] == 5);
  CHECK(j["nodes"].size() == 5);
  CHECK(j["nodes"][3]["speedup"] == 3.5);
  CHECK(j["edges"].size() == 5);
  CHECK(j["edges"][3]["transposition"] == true);
  REQUIRE(j["evaluations"].size() == 1);
  CHECK(j["evaluations"][0]["node"] == 1);
  CHECK(j["evaluations"][0]["result"]["candidate"]["samples"] == 3);
  CHECK(j["evaluations"][0]["result"].dump().find("samples_ns") == std::string::npos);
  // Not finished, and no process holds it: stopped, with what its store says.
  CHECK(j["status"] == "stopped");
  CHECK(j["summary"]["status"] == "stopped");
  CHECK(j["summary"]["evaluations"] == 1);

  store->finish({{"status", "completed"}});
  CHECK(export_json(*store)["summary"]["status"] == "completed");
}

TEST_CASE("export: DOT shows every node and edge, marks failures and the best path") {
  ExportTempDir tmp;
  auto store = sample_run(tmp.path);
  const std::string dot = export_dot(*store);
  CHECK(dot.rfind("digraph", 0) == 0);
  for (int id = 0; id < 5; ++id) CHECK_MESSAGE(!dot_attrs(dot, std::to_string(id)).empty(), id);
  for (const char* e : {"0->1", "0->2", "2->3", "1->3", "1->4"}) CHECK_MESSAGE(!dot_attrs(dot, e).empty(), e);

  CHECK(dot_attrs(dot, "3").find("#3 " + short_hash(sha256_hex("variant 3")) + "\\n3.50x / ok") !=
        std::string::npos);
  CHECK(dot_attrs(dot, "3").find("palegreen") != std::string::npos);          // best
  CHECK(dot_attrs(dot, "0").find("darkgreen") != std::string::npos);          // on the path
  CHECK(dot_attrs(dot, "2").find("red") != std::string::npos);                // failed...
  CHECK(dot_attrs(dot, "2").find("dashed") != std::string::npos);
  CHECK(dot_attrs(dot, "2").find("darkgreen") != std::string::npos);          // ...but on the path
  CHECK(dot_attrs(dot, "4").find("grey") != std::string::npos);               // pending
  CHECK(dot_attrs(dot, "1").find("darkgreen") == std::string::npos);          // not on the path
  CHECK(dot_attrs(dot, "0->2").find("darkgreen") != std::string::npos);
  CHECK(dot_attrs(dot, "2->3").find("darkgreen") != std::string::npos);
  CHECK(dot_attrs(dot, "2->3").find("orange") != std::string::npos);          // debug edge
  CHECK(dot_attrs(dot, "1->3").find("dashed") != std::string::npos);          // transposition
  CHECK(dot_attrs(dot, "1->3").find("darkgreen") == std::string::npos);
  CHECK(dot_attrs(dot, "0->1").find("darkgreen") == std::string::npos);
}

TEST_CASE("export: DOT is accepted by Graphviz") {
  if (std::system("command -v dot >/dev/null 2>&1") != 0) {
    MESSAGE("skipped: Graphviz `dot` is not on PATH");
    return;
  }
  ExportTempDir tmp;
  auto store = sample_run(tmp.path / "run");
  std::ofstream(tmp.path / "tree.dot") << export_dot(*store);
  const std::string cmd = "dot -Tsvg '" + (tmp.path / "tree.dot").string() + "' -o '" +
                          (tmp.path / "tree.svg").string() + "' 2>'" +
                          (tmp.path / "dot.err").string() + "'";
  CHECK(std::system(cmd.c_str()) == 0);
  std::ifstream err(tmp.path / "dot.err");
  const std::string errors((std::istreambuf_iterator<char>(err)), {});
  CHECK_MESSAGE(errors.empty(), errors);  // not even warnings
  std::ifstream svg(tmp.path / "tree.svg");
  const std::string text((std::istreambuf_iterator<char>(svg)), {});
  CHECK(text.find("<svg") != std::string::npos);
  CHECK(text.find("3.50x / ok") != std::string::npos);
}

TEST_CASE("export: CSV has one quoted row per node, all parents and the params as JSON") {
  ExportTempDir tmp;
  auto store = sample_run(tmp.path);
  {
    RunStore::Transaction tx(*store);
    NodeRecord n = make_node(5, NodeStatus::ok, 1.5, "ok");
    n.plan = "TILE 16 -> 32, then \"vectorise\"";  // a comma and quotes
    n.origin = "expand";
    n.depth = 2;
    n.visits = 4;
    n.value_sum = 1.0;
    n.reward = 0.25;
    n.median_ns = 1234.5;
    n.created_seq = 17;
    n.meta = {{"params", {{"TILE", 32}, {"LOOP", "ikj"}}}};
    store->add_node(n);
    store->add_edge(make_edge(1, 5, EdgeKind::expand, false, n.plan));
    store->add_edge(make_edge(3, 5, EdgeKind::expand, true, "ROWS 1 -> 2"));
    tx.commit();
  }
  const std::string csv = export_csv(*store);
  const auto rows = parse_csv(csv);
  const std::vector<std::string> header = {"id", "hash", "status", "verdict", "origin", "depth",
                                           "plan", "parents", "visits", "value", "speedup",
                                           "median_ns", "reward", "debug_attempts", "params",
                                           "created_seq"};
  REQUIRE(rows.size() == 7);  // the header and nodes 0..5
  CHECK(rows[0] == header);
  for (size_t i = 1; i < rows.size(); ++i) {
    REQUIRE(rows[i].size() == header.size());
    CHECK(rows[i][0] == std::to_string(i - 1));  // every node, in id order
  }
  CHECK(csv.find("\"TILE 16 -> 32, then \"\"vectorise\"\"\"") != std::string::npos);  // RFC quoting
  const std::vector<std::string>& row = rows[6];
  CHECK(row[1] == sha256_hex("variant 5"));
  CHECK(row[2] == "ok");
  CHECK(row[6] == "TILE 16 -> 32, then \"vectorise\"");  // round trip
  CHECK(row[7] == "1;3");
  CHECK(row[8] == "4");
  CHECK(row[9] == "0.25");  // value = value_sum / visits = 1.0 / 4
  CHECK(row[10] == "1.5");
  CHECK(row[11] == "1234.5");
  CHECK(row[14] == R"({"LOOP":"ikj","TILE":32})");
  CHECK(row[15] == "17");
  CHECK(rows[1][7] == "");   // the root has no parents
  CHECK(rows[1][9] == "");   // ...and no visits, so no mean value
  CHECK(rows[1][14] == "");  // ...and no params
  CHECK(rows[4][7] == "2;1");  // node 3: its debug parent first, then the transposition
  CHECK(rows[3][2] == "failed");
  CHECK(rows[5][2] == "pending");
}

TEST_CASE("export: SVG through Graphviz, or an error that says how to get it") {
  ExportTempDir tmp;
  auto store = sample_run(tmp.path / "run");
  const std::string dot = export_dot(*store);
  CHECK_THROWS_WITH_AS(render_svg(dot, "kmcts-no-such-dot"),
                       "svg export needs Graphviz's dot (apt-get install graphviz); use --format dot",
                       InputError);
  if (std::system("command -v dot >/dev/null 2>&1") != 0) {
    MESSAGE("skipped the rendering: Graphviz `dot` is not on PATH");
    return;
  }
  const std::string svg = render_svg(dot);
  CHECK(svg.find("<svg") != std::string::npos);
  CHECK(svg.find("3.50x / ok") != std::string::npos);
  CHECK_THROWS_AS(render_svg("digraph { this is not dot"), RunError);
}

TEST_CASE("summary table: a completed run") {
  const json summary = json::parse(R"({
    "status": "completed", "problem": "matmul", "run_dir": "runs/matmul-1", "budget": 40,
    "seed": {"node": 0, "median_ns": 1.2e7, "speedup": 1.01},
    "best": {"node": 17, "hash": "3f2a9c1b7d4e5f60718293a4b5c6d7e8f9012345678901234567890123456789",
             "speedup": 3.9, "speedup_over_seed": 3.8, "median_ns": 3.2e6,
             "plan_history": ["TILE 16 -> 32", "UNROLL 1 -> 4"]},
    "evaluations": 40, "failures": 3, "failures_by_verdict": {"compile_error": 2, "wrong_answer": 1},
    "nodes": 38, "transpositions": 2, "wall_seconds": 52.1})");
  const std::string table = format_summary_table(summary);
  const std::string expected =
      "problem        matmul\n"
      "status         completed\n"
      "seed kernel    12.0 ms  (1.01x vs reference)\n"
      "best kernel    3.20 ms  node #17  3f2a9c1b7d4e\n"
      "speedup        3.80x over seed  (3.90x vs reference)\n"
      "plan history   1. TILE 16 -> 32\n"
      "               2. UNROLL 1 -> 4\n"
      "evaluations    40  (3 failed: 2 compile_error, 1 wrong_answer)\n"
      "nodes          38  (2 transpositions)\n"
      "wall time      52.1 s\n"
      "run directory  runs/matmul-1\n";
  CHECK(table == expected);
}

TEST_CASE("summary table: missing best and a failure message render as '-'") {
  const json summary = {{"status", "failed"}, {"problem", "conv"},
                        {"message", "seed kernel does not compile"}, {"evaluations", 1},
                        {"failures", 1}, {"failures_by_verdict", {{"compile_error", 1}}}};
  const std::string table = format_summary_table(summary);
  CHECK(table.find("best kernel    -\n") != std::string::npos);
  CHECK(table.find("speedup        -\n") != std::string::npos);
  CHECK(table.find("plan history   -\n") != std::string::npos);
  CHECK(table.find("seed kernel    -\n") != std::string::npos);
  CHECK(table.find("wall time      -\n") != std::string::npos);
  CHECK(table.find("evaluations    1  (1 failed: 1 compile_error)\n") != std::string::npos);
  CHECK(table.find("message        seed kernel does not compile\n") != std::string::npos);
  CHECK(format_summary_table(json::object()).find("problem        -\n") == 0);
}

TEST_CASE("summary table: agent usage when the summary counts it") {
  const json summary = {{"agent_calls", 12}, {"tokens", 34567}, {"dollars", 0.1234}};
  CHECK(format_summary_table(summary).find("agents         12 calls, 34567 tokens, $0.12\n") !=
        std::string::npos);
  CHECK(format_summary_table({{"agent_calls", 3}, {"tokens", 900}, {"dollars", 0.00042}, {"llm_requests", 5}, {"llm_retries", 2}})
            .find("agents         3 calls, 900 tokens, $0.0004 (5 LLM calls, 2 retried or failed attempts)\n") != std::string::npos);
  CHECK(format_summary_table({{"agent_calls", 1}, {"tokens", 0}}).find("agents         1 call\n") !=
        std::string::npos);
}

TEST_CASE("summary table: durations in readable units") {
  CHECK(format_duration_ns(850) == "850 ns");
  CHECK(format_duration_ns(12345) == "12.3 us");
  CHECK(format_duration_ns(4.56e6) == "4.56 ms");
  CHECK(format_duration_ns(1.2e9) == "1.20 s");
  CHECK(format_duration_ns(123.4e9) == "123 s");
}

}  // namespace kmcts
