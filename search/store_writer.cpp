#include "search/store_writer.hpp"

#include <chrono>
#include <memory>

namespace kmcts {

using Clock = std::chrono::steady_clock;

StoreWriter::StoreWriter(RunStore& store, double flush_s)
    : store_(store), flush_s_(flush_s), thread_([this] { run(); }) {}

StoreWriter::~StoreWriter() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void StoreWriter::write(Write w) {
  if (muted_) return;
  {
    std::lock_guard lock(mutex_);
    if (error_) return;
    queue_.push_back(Item{std::move(w)});
    ++queued_;
  }
  // No wake-up: the writer acts at batch ends (one hand-off per batch, not per write).
}

void StoreWriter::end_batch() {
  if (muted_) return;
  {
    std::lock_guard lock(mutex_);
    if (error_ || (!queue_.empty() && !queue_.back().write)) return;  // already closed
    queue_.push_back(Item{});
    ++queued_;
  }
  wake_.notify_one();
}

void StoreWriter::sync() {
  end_batch();
  std::unique_lock lock(mutex_);
  sync_target_ = queued_;
  wake_.notify_one();
  idle_.wait(lock, [this] { return committed_ >= sync_target_ || error_; });
  if (error_) std::rethrow_exception(error_);
}

void StoreWriter::check() {
  std::lock_guard lock(mutex_);
  if (error_) std::rethrow_exception(error_);
}

void StoreWriter::run() {
  // The group transaction spans batches until a commit; each batch is a savepoint in it.
  std::unique_ptr<RunStore::Transaction> group, batch;
  auto last_commit = Clock::now();
  bool at_batch_end = true;
  uint64_t done = 0;  // items taken off the queue and applied (or dropped after an error)
  auto commit_due = [&] { return Clock::now() - last_commit >= std::chrono::duration<double>(flush_s_); };
  std::unique_lock lock(mutex_);
  while (true) {
    auto ready = [&] {
      return (!queue_.empty() && !queue_.back().write) || stopping_ || (group && at_batch_end && (sync_target_ > committed_ || commit_due()));
    };
    if (group && at_batch_end)
      wake_.wait_until(lock, last_commit + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(flush_s_)), ready);
    else
      wake_.wait(lock, ready);
    std::deque<Item> items;
    items.swap(queue_);
    const bool stop = stopping_;
    const bool sync = sync_target_ > committed_;
    lock.unlock();

    std::exception_ptr failed;
    for (Item& item : items) {
      ++done;
      if (failed) continue;
      try {
        if (item.write) {
          if (!group) group = std::make_unique<RunStore::Transaction>(store_);
          if (!batch) batch = std::make_unique<RunStore::Transaction>(store_);
          at_batch_end = false;
          item.write(store_);
        } else if (batch) {
          batch->commit();
          batch.reset();
          at_batch_end = true;
        }
      } catch (...) {
        failed = std::current_exception();
      }
    }
    try {
      if (failed || stop) {
        batch.reset();  // an unfinished or failed batch is undone alone
        at_batch_end = true;
      }
      if (group && at_batch_end && (failed || stop || sync || commit_due())) {
        group->commit();
        group.reset();
        last_commit = Clock::now();
      }
    } catch (...) {
      if (!failed) failed = std::current_exception();
      batch.reset();
      group.reset();
    }

    lock.lock();
    if (failed && !error_) error_ = failed;
    if (failed) queue_.clear();
    if (!group) committed_ = done;
    idle_.notify_all();
    if (stop && queue_.empty()) break;
  }
}

}  // namespace kmcts
