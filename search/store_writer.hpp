#pragma once
// The run store's writer thread. The coordinator hands it writes, in order, and goes on;
// the writer applies them to the RunStore on its own thread, so SQLite, JSON serialization
// and the disk never sit on the coordinator's critical path.
//
// Writes come in batches (end_batch() closes one): a batch is atomic, and the writer
// commits only at the end of a batch, at most every `flush_s` seconds (group commit). The
// writer comes by on its own once per flush_s and takes what is queued; the coordinator wakes
// it only for a sync, at the end, when the queue grows long, or with flush_s = 0 (a commit
// after every batch): a wake-up per batch would cost the coordinator a system call. A run
// killed with SIGKILL therefore leaves a store that is consistent as of some batch end, at
// most flush_s seconds (plus the writer's backlog) behind; `kmcts resume` redoes the rest.
// A write that throws undoes its own batch only; the error is kept, later writes are
// dropped, and check() or sync() rethrow it on the coordinator's thread.
//
// A batch's writes wait on the coordinator's side until its end, and go to the writer under
// one lock (not one lock per write); a batch never closed is never written, as it would be
// undone anyway.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "search/run_store.hpp"

namespace kmcts {

class StoreWriter {
 public:
  using Write = std::function<void(RunStore&)>;

  /// Starts the writer thread. The store must outlive the writer.
  StoreWriter(RunStore& store, double flush_s);
  /// Applies and commits what is queued, then stops the thread; errors are swallowed here
  /// (call sync() first to see them).
  ~StoreWriter();
  StoreWriter(const StoreWriter&) = delete;
  StoreWriter& operator=(const StoreWriter&) = delete;

  /// Adds one write to the current batch. Dropped while muted, or after a write failed.
  void write(Write w) {
    if (!muted_) batch_.push_back(std::move(w));
  }
  /// Closes the current batch and hands it to the writer, which may commit after it.
  void end_batch();
  /// While muted, writes are dropped as they are queued (resume re-applies stored events).
  void set_muted(bool muted) { muted_ = muted; }
  bool muted() const { return muted_; }
  /// Ends the batch, waits until everything queued is applied and committed, and rethrows
  /// the first error of a write (as the RunError or InputError it was).
  void sync();
  /// Rethrows the first error of a write, if there was one; does not wait.
  void check();
  RunStore& store() { return store_; }
  /// CPU seconds the writer thread has spent so far (updated after each pass over the queue):
  /// its cost per event, which the engine benchmark reports beside the coordinator's.
  double cpu_seconds() const { return cpu_seconds_.load(std::memory_order_relaxed); }

 private:
  struct Item {
    Write write;  // empty: the end of a batch
  };
  void run();
  bool batch_closed() const { return !queue_.empty() && !queue_.back().write; }
  /// Queued items at which end_batch() wakes the writer before its time (bounds the backlog).
  static constexpr size_t kWakeItems = 1024;

  RunStore& store_;
  const double flush_s_;
  bool muted_ = false;        // coordinator thread only
  std::vector<Write> batch_;  // the current batch's writes (coordinator thread only)
  std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::deque<Item> queue_;
  bool stopping_ = false;
  uint64_t queued_ = 0, committed_ = 0;  // items handed over / applied and committed
  uint64_t sync_target_ = 0;             // a sync() waits until committed_ reaches it
  std::exception_ptr error_;
  std::atomic<bool> failed_{false};  // error_ is set (read by check() without the lock)
  std::atomic<double> cpu_seconds_{0};
  std::thread thread_;
};

}  // namespace kmcts
