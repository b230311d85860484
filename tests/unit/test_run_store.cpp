// RunStore: every record kind survives create -> write -> reopen unchanged (raw samples and
// large logs included), transactions roll back, and bad run directories are clear InputErrors.
#include <doctest/doctest.h>

#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "core/error.hpp"
#include "core/hash.hpp"
#include "search/run_store.hpp"

namespace kmcts {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A fresh directory per test, removed afterwards.
struct StoreTempDir {
  fs::path path;
  StoreTempDir() {
    std::string tmpl = (fs::temp_directory_path() / "kmcts-store-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~StoreTempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

template <class Error, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

NodeRecord node(int id, NodeStatus status, double speedup) {
  NodeRecord n;
  n.id = id;
  n.hash = sha256_hex("kernel " + std::to_string(id));
  n.status = status;
  n.verdict = status == NodeStatus::ok ? "ok" : status == NodeStatus::failed ? "compile_error" : "";
  n.origin = id == 0 ? "seed" : "expand";
  n.depth = id == 0 ? 0 : 1;
  n.speedup = speedup;
  n.median_ns = speedup > 0 ? 1e6 / speedup : 0;
  n.reward = speedup > 0 ? 0.1 * id + 1.0 / 3 : -1;
  n.visits = id + 2;
  n.value_sum = 0.7 * id;
  n.debug_attempts = id % 2;
  n.meta = {{"params", {{"TILE", 16 * (id + 1)}}}, {"note", "ü \"quoted\"\n"}};
  n.plan = id == 0 ? "" : "TILE 16 -> " + std::to_string(16 * (id + 1));
  n.created_seq = 10 * id;
  return n;
}

EdgeRecord edge(int parent, int child, EdgeKind kind, bool transposition, int64_t seq) {
  EdgeRecord e;
  e.parent = parent;
  e.child = child;
  e.kind = kind;
  e.plan = kind == EdgeKind::debug ? "repair: missing semicolon" : "unroll the k loop";
  e.plan_data = {{"op", "UNROLL"}, {"to", 4}};
  e.transposition = transposition;
  e.visits = 3;
  e.seq = seq;
  return e;
}

EvaluationRecord evaluation(int node_id, int64_t seq, std::string log) {
  EvaluationRecord ev;
  ev.node = node_id;
  ev.seq = seq;
  EvalResult& r = ev.result;
  r.verdict = Verdict::ok;
  r.message = "ok: 1.87x";
  r.log = std::move(log);
  // Values that are not exact in decimal: the store must keep every bit.
  r.candidate = TimingStats::from_samples({1000.1, 1010.3, 990.7, 1005.0 / 3, 1e-3});
  r.reference = TimingStats::from_samples({1870.0, 1880.5, 1860.25});
  r.speedup = r.reference.median_ns / r.candidate.median_ns;
  r.details = {{"max_abs_err", 1.5e-7}, {"checked", 4096}};
  r.compile_seconds = 0.123456789;
  r.run_seconds = 2.5;
  r.compile_cached = true;
  return ev;
}

json run_info() { return {{"problem", "matmul"}, {"seed", 7}, {"git", "abc123"}}; }
json config() { return {{"search", {{"budget", 40}, {"c_uct", 1.41}}}}; }

}  // namespace

TEST_CASE("run store: create and reopen round-trips every record kind") {
  StoreTempDir tmp;
  const fs::path dir = tmp.path / "runs" / "one";  // parents are created too
  const std::string big_log(10000, 'x');
  std::vector<NodeRecord> nodes = {node(0, NodeStatus::ok, 1.0), node(1, NodeStatus::failed, 0),
                                   node(2, NodeStatus::pending, 0)};
  const std::vector<EdgeRecord> edges = {edge(0, 1, EdgeKind::expand, false, 11),
                                         edge(1, 2, EdgeKind::debug, false, 21),
                                         edge(0, 2, EdgeKind::expand, true, 22)};
  const std::vector<EvaluationRecord> evals = {evaluation(0, 5, "small log\n"),
                                               evaluation(1, 12, big_log)};
  const EventRecord event{3, 0.25, "node", {{"id", 1}, {"why", "expand"}}};
  {
    auto store = RunStore::create(dir, run_info(), config());
    CHECK(fs::is_directory(dir / "sources"));
    CHECK(fs::is_directory(dir / "logs"));
    CHECK(json::parse(std::ifstream(dir / "config.json")) == config());
    for (const auto& n : nodes) store->add_node(n);
    for (const auto& e : edges) store->add_edge(e);
    CHECK(store->add_evaluation(evals[0]) == 1);
    CHECK(store->add_evaluation(evals[1]) == 2);
    store->append_event(event);
    store->put_source(nodes[0].hash, "int main() {}\n");
    store->put_source(nodes[0].hash, "ignored: same hash, same text\n");
    // Later updates of the mutable fields.
    nodes[2].status = NodeStatus::ok;
    nodes[2].verdict = "ok";
    nodes[2].speedup = 2.5;
    nodes[2].visits = 9;
    NodeRecord update = nodes[2];
    update.meta["params"]["UNROLL"] = 4;  // meta is fixed at add_node: not written
    store->update_node(update);
    store->update_edge_visits(0, 1, 17);
    // A flush's write: the statistics only (the status written above stays).
    nodes[2].visits = 11, nodes[2].value_sum = 3.25, nodes[2].debug_attempts = 1;
    store->update_node_visits(2, 11, 3.25, 1);
    CHECK(store->status() == "running");
    CHECK_FALSE(store->summary().has_value());
  }
  // The big log went to logs/, named by its hash; the small one stayed in the row.
  CHECK(fs::exists(dir / "logs" / (sha256_hex(big_log) + ".log")));

  auto store = RunStore::open(dir);
  CHECK(store->run_info() == run_info());
  CHECK(store->config() == config());

  const auto got_nodes = store->nodes();
  REQUIRE(got_nodes.size() == nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) CHECK(to_json(got_nodes[i]) == to_json(nodes[i]));

  const auto got_edges = store->edges();
  REQUIRE(got_edges.size() == edges.size());
  CHECK(got_edges[0].visits == 17);
  for (size_t i = 1; i < edges.size(); ++i) CHECK(to_json(got_edges[i]) == to_json(edges[i]));

  const auto got_evals = store->evaluations(/*with_samples=*/true);
  REQUIRE(got_evals.size() == evals.size());
  for (size_t i = 0; i < evals.size(); ++i) {
    CHECK(got_evals[i].node == evals[i].node);
    CHECK(got_evals[i].seq == evals[i].seq);
    CHECK(to_json(got_evals[i].result, true) == to_json(evals[i].result, true));
    // Bit-exact samples, in order.
    CHECK(got_evals[i].result.candidate.samples_ns == evals[i].result.candidate.samples_ns);
    CHECK(got_evals[i].result.reference.samples_ns == evals[i].result.reference.samples_ns);
  }
  CHECK(got_evals[1].result.log == big_log);

  const auto light = store->evaluations(/*with_samples=*/false);
  REQUIRE(light.size() == 2);
  CHECK(light[0].result.candidate.samples_ns.empty());
  CHECK(light[0].result.candidate.median_ns == evals[0].result.candidate.median_ns);
  CHECK(light[0].result.reference.q3_ns == evals[0].result.reference.q3_ns);

  const auto got_events = store->events();
  REQUIRE(got_events.size() == 1);
  CHECK(got_events[0].seq == 3);
  CHECK(got_events[0].time_s == 0.25);
  CHECK(got_events[0].kind == "node");
  CHECK(got_events[0].payload == event.payload);

  CHECK(store->source(nodes[0].hash) == std::optional<std::string>("int main() {}\n"));
  CHECK_FALSE(store->source(nodes[1].hash).has_value());
  CHECK_THROWS_AS(store->source("../../etc/passwd"), std::invalid_argument);
}

TEST_CASE("run store: create on a directory that already holds a run is an InputError") {
  StoreTempDir tmp;
  RunStore::create(tmp.path, run_info(), config());
  const std::string msg =
      message_of<InputError>([&] { RunStore::create(tmp.path, run_info(), config()); });
  CHECK(msg == "run directory " + tmp.path.string() + " already holds a run");
}

TEST_CASE("run store: open names the path when it is not a run") {
  StoreTempDir tmp;
  const fs::path missing = tmp.path / "nope";
  std::string msg = message_of<InputError>([&] { RunStore::open(missing); });
  CHECK(msg.find(missing.string()) != std::string::npos);
  CHECK(msg.find("does not exist") != std::string::npos);

  msg = message_of<InputError>([&] { RunStore::open(tmp.path); });
  CHECK(msg.find(tmp.path.string()) != std::string::npos);
  CHECK(msg.find("no run.sqlite") != std::string::npos);

  std::ofstream(tmp.path / "run.sqlite") << "this is not a database, just text long enough......"
                                            "..............................................\n";
  msg = message_of<InputError>([&] { RunStore::open(tmp.path); });
  CHECK(msg.find((tmp.path / "run.sqlite").string()) != std::string::npos);
  CHECK(msg.find("not a kmcts run store") != std::string::npos);

  // A real SQLite file that some other program made.
  const fs::path other = tmp.path / "other";
  fs::create_directories(other);
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open((other / "run.sqlite").c_str(), &db) == SQLITE_OK);
  REQUIRE(sqlite3_exec(db, "CREATE TABLE t(x)", nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
  msg = message_of<InputError>([&] { RunStore::open(other); });
  CHECK(msg == (other / "run.sqlite").string() + " is not a kmcts run store");
}

TEST_CASE("run store: a create killed half-way leaves no store, and the next create is whole") {
  StoreTempDir tmp;
  // What a process killed while creating leaves: the partial file, never run.sqlite.
  std::ofstream(tmp.path / "run.sqlite.partial") << "half a database";
  std::ofstream(tmp.path / "run.sqlite.partial-wal") << "its log";
  CHECK_FALSE(fs::exists(tmp.path / "run.sqlite"));
  {
    auto store = RunStore::create(tmp.path, run_info(), config());
    store->add_node(node(0, NodeStatus::ok, 1.0));
  }
  CHECK_FALSE(fs::exists(tmp.path / "run.sqlite.partial"));
  CHECK_FALSE(fs::exists(tmp.path / "run.sqlite.partial-wal"));
  auto reopened = RunStore::open(tmp.path);
  CHECK(reopened->status() == "running");
  CHECK(reopened->nodes().size() == 1);
}

TEST_CASE("run store: a transaction rolls back on exception and commits on commit()") {
  StoreTempDir tmp;
  auto store = RunStore::create(tmp.path, run_info(), config());
  try {
    RunStore::Transaction tx(*store);
    store->add_node(node(0, NodeStatus::ok, 1.0));
    store->add_node(node(1, NodeStatus::ok, 2.0));
    store->add_edge(edge(0, 1, EdgeKind::expand, false, 1));
    throw std::runtime_error("coordinator failed mid-batch");
  } catch (const std::runtime_error&) {
  }
  CHECK(store->nodes().empty());
  CHECK(store->edges().empty());

  {
    RunStore::Transaction tx(*store);
    store->add_node(node(0, NodeStatus::ok, 1.0));
    // A nested group that fails undoes only its own writes...
    try {
      RunStore::Transaction inner(*store);
      store->add_node(node(1, NodeStatus::ok, 2.0));
      store->add_node(node(1, NodeStatus::ok, 2.0));  // duplicate id: SQLite refuses
      inner.commit();
    } catch (const RunError& e) {
      CHECK(std::string(e.what()).find("run.sqlite") != std::string::npos);
    }
    // ...and a failed single write inside the group leaves the group usable.
    CHECK_THROWS_AS(store->add_edge(edge(0, 99, EdgeKind::expand, false, 2)), RunError);
    store->add_node(node(2, NodeStatus::ok, 3.0));
    tx.commit();
  }
  const auto nodes = RunStore::open(tmp.path)->nodes();
  REQUIRE(nodes.size() == 2);
  CHECK(nodes[0].id == 0);
  CHECK(nodes[1].id == 2);
}

TEST_CASE("run store: SQLite errors are RunErrors naming the store") {
  StoreTempDir tmp;
  auto store = RunStore::create(tmp.path, run_info(), config());
  const std::string msg =
      message_of<RunError>([&] { store->add_edge(edge(0, 1, EdgeKind::expand, false, 1)); });
  CHECK(msg.find("FOREIGN KEY") != std::string::npos);
  CHECK(msg.find((tmp.path / "run.sqlite").string()) != std::string::npos);
  CHECK_THROWS_AS(store->update_node(node(5, NodeStatus::ok, 1.0)), RunError);
  CHECK_THROWS_AS(store->update_edge_visits(0, 1, 3), RunError);
  CHECK_THROWS_AS(store->update_node_visits(5, 1, 0.5, 0), RunError);
}

TEST_CASE("run store: finish writes summary.json and the run's status") {
  StoreTempDir tmp;
  const json summary = {{"status", "failed"}, {"message", "seed kernel does not compile"},
                        {"evaluations", 1}};
  {
    auto store = RunStore::create(tmp.path, run_info(), config());
    store->finish(summary);
  }
  CHECK(json::parse(std::ifstream(tmp.path / "summary.json")) == summary);
  auto store = RunStore::open(tmp.path);
  CHECK(store->status() == "failed");
  REQUIRE(store->summary().has_value());
  CHECK(*store->summary() == summary);
}

}  // namespace kmcts
