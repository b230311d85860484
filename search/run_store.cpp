#include "search/run_store.hpp"

#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <ctime>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/hash.hpp"
#include "search/detail/run_store_impl.hpp"

namespace kmcts {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// 'kmct' in ASCII: lets open() tell a kmcts store from any other SQLite file.
constexpr int kApplicationId = 0x6B6D6374;

// Logs up to this size stay in the evaluation row, so one query shows a typical error message;
// longer ones (full compiler dumps, often repeated across variants) go to logs/, deduplicated.
constexpr size_t kInlineLogBytes = 4096;

// The schema. Records are stored column by column (not as JSON blobs) so that the run can be
// queried with plain SQL; only free-form parts (meta, plan_data, details, payload) are JSON.
constexpr const char* kSchema = R"sql(
CREATE TABLE run (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  info TEXT NOT NULL, config TEXT NOT NULL,
  status TEXT NOT NULL, started_at TEXT NOT NULL, ended_at TEXT, summary TEXT);
CREATE TABLE nodes (
  id INTEGER PRIMARY KEY, hash TEXT NOT NULL, status TEXT NOT NULL, verdict TEXT NOT NULL,
  origin TEXT NOT NULL, depth INTEGER NOT NULL, speedup REAL NOT NULL, median_ns REAL NOT NULL,
  reward REAL NOT NULL, visits INTEGER NOT NULL, value_sum REAL NOT NULL,
  debug_attempts INTEGER NOT NULL, meta TEXT NOT NULL, plan TEXT NOT NULL,
  created_seq INTEGER NOT NULL);
CREATE INDEX nodes_by_hash ON nodes(hash);
CREATE TABLE edges (
  parent INTEGER NOT NULL REFERENCES nodes(id), child INTEGER NOT NULL REFERENCES nodes(id),
  kind TEXT NOT NULL, plan TEXT NOT NULL, plan_data TEXT NOT NULL,
  transposition INTEGER NOT NULL, visits INTEGER NOT NULL, seq INTEGER NOT NULL,
  PRIMARY KEY (parent, child));
CREATE INDEX edges_by_child ON edges(child);
CREATE TABLE evaluations (
  id INTEGER PRIMARY KEY, node INTEGER NOT NULL REFERENCES nodes(id), seq INTEGER NOT NULL,
  verdict TEXT NOT NULL, message TEXT NOT NULL, speedup REAL NOT NULL,
  compile_seconds REAL NOT NULL, run_seconds REAL NOT NULL, compile_cached INTEGER NOT NULL,
  details TEXT NOT NULL,
  log TEXT, log_file TEXT,  -- exactly one is set: the log inline, or logs/<sha256>.log
  cand_n INTEGER NOT NULL, cand_median_ns REAL NOT NULL, cand_q1_ns REAL NOT NULL,
  cand_q3_ns REAL NOT NULL, cand_min_ns REAL NOT NULL, cand_mean_ns REAL NOT NULL,
  cand_cv REAL NOT NULL, cand_rse_median REAL NOT NULL,
  ref_n INTEGER NOT NULL, ref_median_ns REAL NOT NULL, ref_q1_ns REAL NOT NULL,
  ref_q3_ns REAL NOT NULL, ref_min_ns REAL NOT NULL, ref_mean_ns REAL NOT NULL,
  ref_cv REAL NOT NULL, ref_rse_median REAL NOT NULL,
  -- every raw sample, in nanoseconds, as a JSON array (one row per evaluation keeps the
  -- write cheap; SQL reads them with json_each)
  cand_samples_ns TEXT NOT NULL, ref_samples_ns TEXT NOT NULL);
CREATE INDEX evaluations_by_node ON evaluations(node);
CREATE TABLE events (
  seq INTEGER PRIMARY KEY, time_s REAL NOT NULL, kind TEXT NOT NULL, payload TEXT NOT NULL);
)sql";


}  // namespace

namespace detail {

void check_hash(const std::string& hash) {
  bool ok = !hash.empty() && hash.size() <= 128;
  for (char c : hash) ok = ok && std::isxdigit(static_cast<unsigned char>(c));
  if (!ok) throw std::invalid_argument("not a content hash: \"" + hash + "\"");
}

json parse_stored_json(const std::string& text, const fs::path& db, const char* what) {
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    throw RunError(std::string("corrupt ") + what + " in " + db.string() + ": " + e.what());
  }
}

}  // namespace detail

namespace {

// Per-connection settings. WAL lets `kmcts show` read while the run writes; synchronous=NORMAL
// in WAL mode loses nothing when the process dies (only on power loss), and commits stay cheap.
void configure_connection(detail::Database& db) {
  db.exec("PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000; PRAGMA synchronous = NORMAL; PRAGMA temp_store = MEMORY;");
}

int64_t pragma_int(detail::Database& db, const char* name) {
  auto st = db.prepare(std::string("PRAGMA ") + name);
  return st.step() ? st.int64(0) : 0;
}

}  // namespace

RunStore::RunStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RunStore::~RunStore() = default;

std::unique_ptr<RunStore> RunStore::create(const fs::path& run_dir, const json& run_info,
                                           const json& effective_config) {
  if (fs::exists(run_dir / "run.sqlite"))
    throw InputError("run directory " + run_dir.string() + " already holds a run");
  std::error_code ec;
  for (const fs::path& d : {run_dir, run_dir / "sources", run_dir / "logs"}) {
    fs::create_directories(d, ec);
    if (ec) throw InputError("cannot create run directory " + d.string() + ": " + ec.message());
  }
  // The store is built whole under another name and renamed into place, so a process killed
  // while creating it leaves either no run.sqlite (the run starts afresh) or a complete one,
  // never an empty file that open() would refuse. A leftover of such a kill is removed first.
  const fs::path partial = run_dir / "run.sqlite.partial";
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(partial.string() + suffix, ec);
  {
    detail::Database db(partial, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    db.exec("PRAGMA journal_mode = WAL;");  // kept in the file's header
    configure_connection(db);
    db.exec("BEGIN; " + std::string(kSchema) + "PRAGMA application_id = " +
            std::to_string(kApplicationId) + "; PRAGMA user_version = " +
            std::to_string(kSchemaVersion) + ";");
    auto insert = db.prepare(
        "INSERT INTO run (id, info, config, status, started_at) VALUES (1, ?, ?, 'running', ?)");
    insert.bind(1, run_info.dump()).bind(2, effective_config.dump()).bind(3, utc_now());
    insert.run();
    db.exec("COMMIT;");
  }  // closed: its WAL checkpointed into the file and removed
  fs::rename(partial, run_dir / "run.sqlite", ec);
  if (ec) throw RunError("cannot move " + partial.string() + " into place: " + ec.message());
  auto impl = std::make_unique<Impl>(run_dir, SQLITE_OPEN_READWRITE);
  configure_connection(impl->db);
  write_file_atomic(run_dir / "config.json", effective_config.dump(2) + "\n");
  impl->prepare_statements();
  return std::unique_ptr<RunStore>(new RunStore(std::move(impl)));
}

std::unique_ptr<RunStore> RunStore::open(const fs::path& run_dir) {
  if (!fs::is_directory(run_dir))
    throw InputError("run directory " + run_dir.string() + " does not exist");
  const fs::path file = run_dir / "run.sqlite";
  if (!fs::is_regular_file(file))
    throw InputError(run_dir.string() + " is not a kmcts run directory (no run.sqlite)");
  auto impl = std::make_unique<Impl>(run_dir, SQLITE_OPEN_READWRITE);
  int64_t app_id = 0, version = 0;
  try {
    configure_connection(impl->db);
    app_id = pragma_int(impl->db, "application_id");
    version = pragma_int(impl->db, "user_version");
  } catch (const RunError& e) {  // e.g. "file is not a database"
    throw InputError(file.string() + " is not a kmcts run store: " + e.what());
  }
  if (app_id != kApplicationId)
    throw InputError(file.string() + " is not a kmcts run store");
  if (version != kSchemaVersion)
    throw InputError(file.string() + " has run store schema version " + std::to_string(version) +
                     "; this kmcts reads version " + std::to_string(kSchemaVersion));
  impl->prepare_statements();
  return std::unique_ptr<RunStore>(new RunStore(std::move(impl)));
}

// --- transactions ---------------------------------------------------------------------------

void RunStore::begin_savepoint() {
  impl_->savepoint.run();
  ++impl_->depth;
}

void RunStore::release_savepoint() {
  impl_->release.run();  // the outermost RELEASE commits
  --impl_->depth;
}

void RunStore::rollback_savepoint() noexcept {
  // ROLLBACK TO keeps the savepoint open; RELEASE then closes it (and the transaction, if
  // outermost) with nothing left to commit. Failures here cannot be reported from a destructor;
  // SQLite rolls back on its own when the connection closes.
  try {
    impl_->rollback_to.run();
    impl_->release.run();
  } catch (...) {
  }
  --impl_->depth;
}

RunStore::Transaction::Transaction(RunStore& store) : store_(&store) { store.begin_savepoint(); }

RunStore::Transaction::~Transaction() {
  if (!done_) store_->rollback_savepoint();
}

void RunStore::Transaction::commit() {
  if (done_) throw std::logic_error("RunStore::Transaction committed twice");
  store_->release_savepoint();
  done_ = true;
}

// --- writes ---------------------------------------------------------------------------------
// A write of one SQL statement needs no savepoint of its own: SQLite undoes a failed statement's
// changes by itself, inside a transaction or out of one. A savepoint per write cost the store
// writer's thread 12% of its instructions (callgrind, engine bench). update_config and finish
// still take one: their statement is undone if their file cannot be written. add_evaluation
// writes its log file first and needs none (a log file without its row is a harmless orphan,
// named by content).

void RunStore::put_source(const std::string& hash, const std::string& source) {
  detail::check_hash(hash);
  const fs::path path = impl_->dir / "sources" / (hash + ".cpp");
  if (fs::exists(path)) return;  // content-addressed: same hash, same text
  write_file_atomic(path, source);
}

void RunStore::add_node(const NodeRecord& n) {
  auto& st = impl_->insert_node;
  st.bind(1, n.id).bind(2, n.hash).bind(3, to_string(n.status)).bind(4, n.verdict);
  st.bind(5, n.origin).bind(6, n.depth).bind(7, n.speedup).bind(8, n.median_ns);
  st.bind(9, n.reward).bind(10, n.visits).bind(11, n.value_sum).bind(12, n.debug_attempts);
  st.bind(13, n.meta.dump()).bind(14, n.plan).bind(15, n.created_seq);
  st.run();
}

void RunStore::update_node(const NodeRecord& n) {
  auto& st = impl_->update_node;
  st.bind(1, to_string(n.status)).bind(2, n.verdict).bind(3, n.speedup).bind(4, n.median_ns);
  st.bind(5, n.reward).bind(6, n.visits).bind(7, n.value_sum).bind(8, n.debug_attempts);
  st.bind(9, n.id);
  st.run();
  if (impl_->db.changes() != 1)
    throw RunError("update of unknown node #" + std::to_string(n.id) + " in " +
                   impl_->db.file().string());
}

void RunStore::update_node_visits(int id, int visits, double value_sum, int debug_attempts) {
  impl_->update_visits.bind(1, visits).bind(2, value_sum).bind(3, debug_attempts).bind(4, id).run();
  if (impl_->db.changes() != 1)
    throw RunError("update of unknown node #" + std::to_string(id) + " in " + impl_->db.file().string());
}

void RunStore::add_edge(const EdgeRecord& e) {
  auto& st = impl_->insert_edge;
  st.bind(1, e.parent).bind(2, e.child).bind(3, to_string(e.kind)).bind(4, e.plan);
  st.bind(5, e.plan_data.dump()).bind(6, e.transposition).bind(7, e.visits).bind(8, e.seq);
  st.run();
}

void RunStore::update_edge_visits(int parent, int child, int visits) {
  impl_->update_edge.bind(1, visits).bind(2, parent).bind(3, child).run();
  if (impl_->db.changes() != 1)
    throw RunError("update of unknown edge #" + std::to_string(parent) + " -> #" +
                   std::to_string(child) + " in " + impl_->db.file().string());
}

namespace {

// Binds the 8 statistics columns of one kernel starting at parameter `first`.
void bind_stats(detail::Statement& st, int first, const TimingStats& t) {
  st.bind(first, t.samples()).bind(first + 1, t.median_ns).bind(first + 2, t.q1_ns);
  st.bind(first + 3, t.q3_ns).bind(first + 4, t.min_ns).bind(first + 5, t.mean_ns);
  st.bind(first + 6, t.cv).bind(first + 7, t.rse_median);
}

}  // namespace

int64_t RunStore::add_evaluation(const EvaluationRecord& ev) {
  const EvalResult& r = ev.result;
  std::string log_file;
  if (r.log.size() > kInlineLogBytes) {
    const std::string name = sha256_hex(r.log) + ".log";
    log_file = "logs/" + name;
    if (!fs::exists(impl_->dir / log_file)) write_file_atomic(impl_->dir / log_file, r.log);
  }
  auto& st = impl_->insert_evaluation;
  st.bind(1, ev.node).bind(2, ev.seq).bind(3, to_string(r.verdict)).bind(4, r.message);
  st.bind(5, r.speedup).bind(6, r.compile_seconds).bind(7, r.run_seconds);
  st.bind(8, r.compile_cached).bind(9, r.details.dump());
  if (log_file.empty()) {
    st.bind(10, r.log).bind_null(11);
  } else {
    st.bind_null(10).bind(11, log_file);
  }
  bind_stats(st, 12, r.candidate);
  bind_stats(st, 20, r.reference);
  st.bind(28, json(r.candidate.samples_ns).dump()).bind(29, json(r.reference.samples_ns).dump());
  st.run();
  const int64_t id = impl_->db.last_insert_rowid();
  return id;
}

void RunStore::append_event(const EventRecord& e) {
  impl_->insert_event.bind(1, e.seq).bind(2, e.time_s).bind(3, e.kind)
      .bind(4, e.payload.dump()).run();
}

void RunStore::update_config(const json& effective_config) {
  Transaction tx(*this);
  impl_->db.prepare("UPDATE run SET config=? WHERE id=1").bind(1, effective_config.dump()).run();
  write_file_atomic(impl_->dir / "config.json", effective_config.dump(2) + "\n");
  tx.commit();
}

void RunStore::finish(const json& summary) {
  const std::string status =
      summary.contains("status") && summary["status"].is_string() ? summary["status"].get<std::string>()
                                                                  : "completed";
  Transaction tx(*this);
  auto st = impl_->db.prepare("UPDATE run SET status=?, ended_at=?, summary=? WHERE id=1");
  st.bind(1, status).bind(2, utc_now()).bind(3, summary.dump()).run();
  // Written inside the transaction: if the file cannot be written, the run is not marked ended.
  write_file_atomic(impl_->dir / "summary.json", summary.dump(2) + "\n");
  tx.commit();
}

void RunStore::reopen() {
  Transaction tx(*this);
  impl_->db.prepare("UPDATE run SET status='running', ended_at=NULL, summary=NULL WHERE id=1").run();
  std::filesystem::remove(impl_->dir / "summary.json");
  tx.commit();
}

}  // namespace kmcts
