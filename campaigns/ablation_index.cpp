#include "campaigns/ablation_index.hpp"

#include <mutex>

#include <fmt/format.h>

#include "core/error.hpp"
#include "search/detail/sqlite.hpp"

namespace kmcts {

namespace fs = std::filesystem;
using detail::Database;
using detail::Statement;

namespace {

// "kmAI": tells our index apart from any other SQLite file (and from a run store).
constexpr int64_t kApplicationId = 0x6b6d4149;
constexpr int kIndexVersion = 1;

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS grid (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS axes (position INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS configs (
  config TEXT PRIMARY KEY, position INTEGER NOT NULL, axis_values_json TEXT NOT NULL, overrides_json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
  run_id TEXT PRIMARY KEY, config TEXT NOT NULL, problem TEXT NOT NULL, seed INTEGER NOT NULL,
  run_dir TEXT NOT NULL, status TEXT NOT NULL, error TEXT,
  best_speedup REAL, best_over_seed REAL, evaluations INTEGER, failures INTEGER, agent_calls INTEGER,
  tokens INTEGER, dollars REAL, wall_s REAL, gpu_s REAL, started_at TEXT, finished_at TEXT);
)sql";

constexpr const char* kRunColumns =
    "run_id, config, problem, seed, run_dir, status, error, best_speedup, best_over_seed, evaluations, failures, "
    "agent_calls, tokens, dollars, wall_s, gpu_s, started_at, finished_at";

fs::path index_file(const fs::path& out) { return out / "index.sqlite"; }

int64_t pragma_int(Database& db, const char* name) {
  Statement st = db.prepare(std::string("PRAGMA ") + name);
  return st.step() ? st.int64(0) : 0;
}

template <typename T>
void bind_optional(Statement& st, int i, const std::optional<T>& v) {
  if (v) st.bind(i, *v);
  else st.bind_null(i);
}

std::optional<double> column_real(const Statement& st, int col) {
  return st.is_null(col) ? std::nullopt : std::optional<double>(st.real(col));
}
std::optional<int64_t> column_int(const Statement& st, int col) {
  return st.is_null(col) ? std::nullopt : std::optional<int64_t>(st.int64(col));
}

// A reader's connection: read-only, and refuses a file that is not an ablation index.
std::unique_ptr<Database> open_for_reading(const fs::path& out) {
  const fs::path file = index_file(out);
  if (!fs::exists(file)) throw InputError(fmt::format("{} does not exist: is {} an ablation folder?", file.string(), out.string()));
  auto db = std::make_unique<Database>(file, SQLITE_OPEN_READONLY);
  db->exec("PRAGMA busy_timeout = 5000;");
  if (pragma_int(*db, "application_id") != kApplicationId)
    throw InputError(fmt::format("{} is not a kmcts ablation index", file.string()));
  return db;
}

std::vector<std::string> parse_string_list(const std::string& text, const fs::path& file) {
  try {
    return nlohmann::json::parse(text).get<std::vector<std::string>>();
  } catch (const nlohmann::json::exception& e) {
    throw RunError(fmt::format("corrupt overrides_json in {}: {}", file.string(), e.what()));
  }
}

}  // namespace

struct AblationIndex::Impl {
  explicit Impl(const fs::path& file) : db(file, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) {}
  std::mutex mutex;
  Database db;
};

AblationIndex::AblationIndex(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
AblationIndex::~AblationIndex() = default;

std::unique_ptr<AblationIndex> AblationIndex::open_for_writing(const fs::path& out) {
  auto impl = std::make_unique<Impl>(index_file(out));
  Database& db = impl->db;
  db.exec("PRAGMA journal_mode = WAL; PRAGMA busy_timeout = 5000; PRAGMA synchronous = NORMAL;");
  const int64_t id = pragma_int(db, "application_id");
  if (id != 0 && id != kApplicationId)
    throw InputError(fmt::format("{} is not a kmcts ablation index", index_file(out).string()));
  db.exec(fmt::format("BEGIN; {} PRAGMA application_id = {}; PRAGMA user_version = {}; COMMIT;", kSchema, kApplicationId,
                      kIndexVersion));
  return std::unique_ptr<AblationIndex>(new AblationIndex(std::move(impl)));
}

void AblationIndex::write_grid(const std::map<std::string, std::string>& grid, const std::vector<std::string>& axes,
                               const std::vector<AblationConfigRow>& configs) {
  std::lock_guard lock(impl_->mutex);
  Database& db = impl_->db;
  db.exec("BEGIN; DELETE FROM grid; DELETE FROM axes; DELETE FROM configs;");
  try {
    Statement g = db.prepare("INSERT INTO grid (key, value) VALUES (?, ?)");
    for (const auto& [key, value] : grid) g.bind(1, key).bind(2, value).run();
    Statement a = db.prepare("INSERT INTO axes (position, name) VALUES (?, ?)");
    for (size_t i = 0; i < axes.size(); ++i) a.bind(1, static_cast<int64_t>(i)).bind(2, axes[i]).run();
    Statement c = db.prepare("INSERT INTO configs (config, position, axis_values_json, overrides_json) VALUES (?, ?, ?, ?)");
    for (const auto& row : configs)
      c.bind(1, row.config).bind(2, row.position).bind(3, row.axis_values.dump()).bind(4, nlohmann::json(row.overrides).dump()).run();
    db.exec("COMMIT;");
  } catch (...) {
    db.exec("ROLLBACK;");
    throw;
  }
}

void AblationIndex::put_run(const AblationRunRow& r) {
  std::lock_guard lock(impl_->mutex);
  Statement st = impl_->db.prepare(fmt::format("INSERT OR REPLACE INTO runs ({}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", kRunColumns));
  st.bind(1, r.run_id).bind(2, r.config).bind(3, r.problem).bind(4, r.seed).bind(5, r.run_dir).bind(6, r.status);
  if (r.error.empty()) st.bind_null(7);
  else st.bind(7, r.error);
  bind_optional(st, 8, r.best_speedup);
  bind_optional(st, 9, r.best_over_seed);
  bind_optional(st, 10, r.evaluations);
  bind_optional(st, 11, r.failures);
  bind_optional(st, 12, r.agent_calls);
  bind_optional(st, 13, r.tokens);
  bind_optional(st, 14, r.dollars);
  bind_optional(st, 15, r.wall_s);
  bind_optional(st, 16, r.gpu_s);
  st.bind(17, r.started_at).bind(18, r.finished_at);
  st.run();
}

std::map<std::string, std::string> read_ablation_grid(const fs::path& out) {
  auto db = open_for_reading(out);
  std::map<std::string, std::string> grid;
  Statement st = db->prepare("SELECT key, value FROM grid");
  while (st.step()) grid[st.text(0)] = st.text(1);
  return grid;
}

std::vector<std::string> read_ablation_axes(const fs::path& out) {
  auto db = open_for_reading(out);
  std::vector<std::string> axes;
  Statement st = db->prepare("SELECT name FROM axes ORDER BY position");
  while (st.step()) axes.push_back(st.text(0));
  return axes;
}

std::vector<AblationConfigRow> read_ablation_configs(const fs::path& out) {
  auto db = open_for_reading(out);
  std::vector<AblationConfigRow> rows;
  Statement st = db->prepare("SELECT config, position, axis_values_json, overrides_json FROM configs ORDER BY position");
  while (st.step()) {
    AblationConfigRow row;
    row.config = st.text(0);
    row.position = st.integer(1);
    row.axis_values = nlohmann::ordered_json::parse(st.text(2), nullptr, false);
    if (row.axis_values.is_discarded()) throw RunError(fmt::format("corrupt axis_values_json in {}", index_file(out).string()));
    row.overrides = parse_string_list(st.text(3), index_file(out));
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<AblationRunRow> read_ablation_runs(const fs::path& out) {
  auto db = open_for_reading(out);
  std::vector<AblationRunRow> rows;
  Statement st = db->prepare(fmt::format(
      "SELECT {} FROM runs LEFT JOIN configs USING (config) ORDER BY configs.position, problem, seed, run_id", kRunColumns));
  while (st.step()) {
    AblationRunRow r;
    r.run_id = st.text(0);
    r.config = st.text(1);
    r.problem = st.text(2);
    r.seed = st.int64(3);
    r.run_dir = st.text(4);
    r.status = st.text(5);
    r.error = st.text(6);
    r.best_speedup = column_real(st, 7);
    r.best_over_seed = column_real(st, 8);
    r.evaluations = column_int(st, 9);
    r.failures = column_int(st, 10);
    r.agent_calls = column_int(st, 11);
    r.tokens = column_int(st, 12);
    r.dollars = column_real(st, 13);
    r.wall_s = column_real(st, 14);
    r.gpu_s = column_real(st, 15);
    r.started_at = st.text(16);
    r.finished_at = st.text(17);
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace kmcts
