#pragma once
// The run store: everything a run leaves behind, in one directory.
//
//   RUN_DIR/run.sqlite      run info, config, nodes, edges, evaluations + raw samples, events
//   RUN_DIR/config.json     the effective config (a copy for people and other tools)
//   RUN_DIR/summary.json    written by finish()
//   RUN_DIR/sources/<hash>.cpp   kernel sources, named by canonical hash
//   RUN_DIR/logs/<sha256>.log    large evaluation logs, named by content hash
//
// One RunStore per run directory; writes come from one thread (during a search, the
// StoreWriter's, which writes the sources of new nodes too; put_source may be called from any).
// Every write is atomic on its own; wrap several in a RunStore::Transaction to commit them
// together (and faster). SQLite runs in WAL mode, so `kmcts show` can read a run that is still
// going.
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "search/records.hpp"

namespace kmcts {

class RunStore {
 public:
  /// Version of the SQLite schema; open() refuses any other.
  static constexpr int kSchemaVersion = 2;  // 2: raw samples as JSON arrays in evaluations

  /// Creates RUN_DIR (and parents), run.sqlite, sources/, logs/ and config.json.
  /// Throws InputError if RUN_DIR already holds a run, RunError if anything cannot be written.
  static std::unique_ptr<RunStore> create(const std::filesystem::path& run_dir,
                                          const nlohmann::json& run_info,
                                          const nlohmann::json& effective_config);
  /// Opens an existing run. Throws InputError (one line naming the path) if RUN_DIR or its
  /// run.sqlite is missing or is not a kmcts store of this schema version.
  static std::unique_ptr<RunStore> open(const std::filesystem::path& run_dir);

  ~RunStore();
  RunStore(const RunStore&) = delete;
  RunStore& operator=(const RunStore&) = delete;

  /// Groups writes into one SQLite transaction: commit() makes them durable together; leaving
  /// the scope without commit() (an exception) rolls them back. Transactions nest: an inner one
  /// that rolls back undoes only its own writes (they are SQLite savepoints).
  class Transaction {
   public:
    explicit Transaction(RunStore& store);
    ~Transaction();
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    void commit();

   private:
    RunStore* store_;
    bool done_ = false;
  };

  // --- writes -----------------------------------------------------------------------------
  /// Writes sources/<hash>.cpp once (temp file + rename); a second call is a no-op. Unlike
  /// the other writes, safe to call from any thread (it touches only files).
  void put_source(const std::string& hash, const std::string& source);
  void add_node(const NodeRecord& node);
  /// Updates the mutable fields: status, verdict, speedup, median, reward, visits, value_sum,
  /// debug_attempts (hash, origin, depth, meta and plan are fixed at add_node). Throws
  /// RunError for an unknown node id.
  void update_node(const NodeRecord& node);
  /// Updates only what the search's statistics change after the evaluation: visits,
  /// value_sum and debug_attempts. Throws RunError for an unknown node id.
  void update_node_visits(int id, int visits, double value_sum, int debug_attempts);
  void add_edge(const EdgeRecord& edge);
  void update_edge_visits(int parent, int child, int visits);
  /// Stores the result with every raw sample; returns the evaluation id (1, 2, ...).
  int64_t add_evaluation(const EvaluationRecord& evaluation);
  void append_event(const EventRecord& event);
  /// Replaces the effective config (the table and config.json): `kmcts resume --budget`
  /// continues a run under changed settings, and later readers must see them.
  void update_config(const nlohmann::json& effective_config);
  /// Writes summary.json and marks the run ended with summary["status"] (default "completed").
  void finish(const nlohmann::json& summary);
  /// Marks an ended run running again (a resume of an interrupted run, or one extended past its
  /// budget): its summary is dropped until the next finish().
  void reopen();

  // --- reads ------------------------------------------------------------------------------
  const std::filesystem::path& dir() const;
  nlohmann::json run_info() const;
  nlohmann::json config() const;
  /// "running" until finish(), then the summary's status.
  std::string status() const;
  std::optional<nlohmann::json> summary() const;
  std::vector<NodeRecord> nodes() const;              // by id
  std::vector<EdgeRecord> edges() const;              // in insertion order
  std::vector<EvaluationRecord> evaluations(bool with_samples) const;  // in insertion order
  std::vector<EventRecord> events() const;            // by seq
  /// The kernel source stored under this hash, if any.
  std::optional<std::string> source(const std::string& hash) const;

 private:
  struct Impl;
  explicit RunStore(std::unique_ptr<Impl> impl);
  void begin_savepoint();
  void release_savepoint();
  void rollback_savepoint() noexcept;

  std::unique_ptr<Impl> impl_;
};

}  // namespace kmcts
