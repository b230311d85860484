#pragma once
// Minimal RAII over the SQLite C API for the run store. Only what the store needs: open,
// exec, prepared statements with typed bind/column, and errors that name the database file.
// Internal to the stores: search/run_store*.cpp, search/memory_archive.cpp and
// campaigns/ablation_index.cpp include it, nothing else should.
#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>

#include "core/error.hpp"

namespace kmcts::detail {

/// Throws RunError "<what>: <sqlite message> (<file>)". Every SQLite failure in a run is a
/// failure of the run (disk full, file locked, corruption), so RunError is the right kind.
[[noreturn]] inline void throw_sqlite(sqlite3* db, const std::filesystem::path& file,
                                      std::string_view what) {
  std::string msg(what);
  msg += ": ";
  msg += db ? sqlite3_errmsg(db) : "out of memory";
  msg += " (" + file.string() + ")";
  throw RunError(msg);
}

class Statement {
 public:
  Statement() = default;
  Statement(sqlite3* db, const std::filesystem::path& file, std::string_view sql)
      : db_(db), file_(&file) {
    if (sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
                           &stmt_, nullptr) != SQLITE_OK)
      throw_sqlite(db, file, "cannot prepare \"" + std::string(sql.substr(0, 60)) + "\"");
  }
  Statement(Statement&& o) noexcept
      : db_(o.db_), file_(o.file_), stmt_(std::exchange(o.stmt_, nullptr)) {}
  Statement& operator=(Statement&& o) noexcept {
    if (this != &o) {
      sqlite3_finalize(stmt_);
      db_ = o.db_;
      file_ = o.file_;
      stmt_ = std::exchange(o.stmt_, nullptr);
    }
    return *this;
  }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement() { sqlite3_finalize(stmt_); }

  // Binding is 1-based like SQLite; text is copied (SQLITE_TRANSIENT) because callers pass
  // temporaries such as json.dump().
  Statement& bind(int i, int64_t v) { return check(sqlite3_bind_int64(stmt_, i, v)); }
  Statement& bind(int i, int v) { return bind(i, static_cast<int64_t>(v)); }
  Statement& bind(int i, bool v) { return bind(i, static_cast<int64_t>(v ? 1 : 0)); }
  Statement& bind(int i, double v) { return check(sqlite3_bind_double(stmt_, i, v)); }
  Statement& bind(int i, std::string_view v) {
    return check(sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()),
                                   SQLITE_TRANSIENT));
  }
  Statement& bind(int i, const std::string& v) { return bind(i, std::string_view(v)); }
  Statement& bind(int i, const char* v) { return bind(i, std::string_view(v)); }
  Statement& bind_null(int i) { return check(sqlite3_bind_null(stmt_, i)); }

  /// One step: true when a row is available, false when done. Resets nothing.
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    // Reset so the statement is reusable after a failed write (constraint violation, ...).
    sqlite3_reset(stmt_);
    throw_sqlite(db_, *file_, "query failed");
  }
  /// Runs a write to completion and resets it for the next use.
  void run() {
    while (step()) {
    }
    reset();
  }
  void reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }

  int64_t int64(int col) const { return sqlite3_column_int64(stmt_, col); }
  int integer(int col) const { return sqlite3_column_int(stmt_, col); }
  double real(int col) const { return sqlite3_column_double(stmt_, col); }
  bool is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  std::string text(int col) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
    return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(stmt_, col))) : std::string();
  }

 private:
  Statement& check(int rc) {
    if (rc != SQLITE_OK) throw_sqlite(db_, *file_, "cannot bind a value");
    return *this;
  }

  sqlite3* db_ = nullptr;
  const std::filesystem::path* file_ = nullptr;  // owned by the Database, which outlives us
  sqlite3_stmt* stmt_ = nullptr;
};

class Database {
 public:
  /// flags: SQLITE_OPEN_READWRITE, optionally | SQLITE_OPEN_CREATE.
  Database(std::filesystem::path file, int flags) : file_(std::move(file)) {
    if (sqlite3_open_v2(file_.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
      std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
      sqlite3_close(db_);
      db_ = nullptr;
      throw RunError("cannot open " + file_.string() + ": " + msg);
    }
    sqlite3_extended_result_codes(db_, 1);
  }
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  // sqlite3_close_v2 defers the close until every statement is finalized, so member order
  // in the owner does not matter.
  ~Database() { sqlite3_close_v2(db_); }

  void exec(const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      std::string msg = err ? err : sqlite3_errmsg(db_);
      sqlite3_free(err);
      throw RunError(msg + " (" + file_.string() + ")");
    }
  }
  Statement prepare(std::string_view sql) { return Statement(db_, file_, sql); }
  int64_t last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }
  int changes() const { return sqlite3_changes(db_); }
  const std::filesystem::path& file() const { return file_; }
  sqlite3* handle() const { return db_; }

 private:
  std::filesystem::path file_;
  sqlite3* db_ = nullptr;
};

}  // namespace kmcts::detail
