#pragma once
// The parts of RunStore shared by its two source files (run_store.cpp: create, open, writes;
// run_store_reads.cpp: reads). Internal to the run store.
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "search/detail/sqlite.hpp"
#include "search/run_store.hpp"

namespace kmcts {

namespace detail {

// Column list of `nodes`, in the order both the insert and the select use.
inline constexpr const char* kNodeColumns =
    "id, hash, status, verdict, origin, depth, speedup, median_ns, reward, visits, value_sum, "
    "debug_attempts, meta, plan, created_seq";

/// Hashes become file names; anything but hex is refused (std::invalid_argument), which keeps
/// them inside sources/ and logs/.
void check_hash(const std::string& hash);
/// Parses JSON text read back from the store; RunError naming the database if it is corrupt.
nlohmann::json parse_stored_json(const std::string& text, const std::filesystem::path& db,
                                 const char* what);

}  // namespace detail

struct RunStore::Impl {
  Impl(std::filesystem::path d, int flags) : dir(std::move(d)), db(dir / "run.sqlite", flags) {}

  void prepare_statements() {
    insert_node = db.prepare(std::string("INSERT INTO nodes (") + detail::kNodeColumns +
                             ") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    update_node = db.prepare(
        "UPDATE nodes SET status=?, verdict=?, speedup=?, median_ns=?, reward=?, visits=?, "
        "value_sum=?, debug_attempts=? WHERE id=?");
    insert_edge = db.prepare(
        "INSERT INTO edges (parent, child, kind, plan, plan_data, transposition, visits, seq) "
        "VALUES (?,?,?,?,?,?,?,?)");
    update_visits = db.prepare("UPDATE nodes SET visits=?, value_sum=?, debug_attempts=? WHERE id=?");
    update_edge = db.prepare("UPDATE edges SET visits=? WHERE parent=? AND child=?");
    insert_evaluation = db.prepare(
        "INSERT INTO evaluations (node, seq, verdict, message, speedup, compile_seconds, "
        "run_seconds, compile_cached, details, log, log_file, cand_n, cand_median_ns, "
        "cand_q1_ns, cand_q3_ns, cand_min_ns, cand_mean_ns, cand_cv, cand_rse_median, ref_n, "
        "ref_median_ns, ref_q1_ns, ref_q3_ns, ref_min_ns, ref_mean_ns, ref_cv, ref_rse_median, cand_samples_ns, ref_samples_ns) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    insert_event = db.prepare("INSERT INTO events (seq, time_s, kind, payload) VALUES (?,?,?,?)");
    savepoint = db.prepare("SAVEPOINT kmcts");
    release = db.prepare("RELEASE kmcts");
    rollback_to = db.prepare("ROLLBACK TO kmcts");
  }

  std::filesystem::path dir;
  detail::Database db;
  int depth = 0;  // open savepoints
  detail::Statement insert_node, update_node, update_visits, insert_edge, update_edge, insert_evaluation,
      insert_event, savepoint, release, rollback_to;
};

}  // namespace kmcts
