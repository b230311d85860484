#include "search/store_writer.hpp"

#include <chrono>
#include <memory>

#include "core/clock.hpp"

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

void StoreWriter::end_batch() {
  if (muted_ || batch_.empty()) return;  // nothing since the last end: nothing to close
  bool wake = false;
  {
    std::lock_guard lock(mutex_);
    if (error_) {
      batch_.clear();  // dropped: a write failed
      return;
    }
    for (Write& w : batch_) queue_.push_back(Item{std::move(w)});
    queue_.push_back(Item{});
    queued_ += batch_.size() + 1;
    wake = flush_s_ <= 0 || queue_.size() >= kWakeItems;
  }
  batch_.clear();
  if (wake) wake_.notify_one();
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
  if (!failed_.load(std::memory_order_acquire)) return;  // no lock on the coordinator's every step
  std::lock_guard lock(mutex_);
  if (error_) std::rethrow_exception(error_);
}

void StoreWriter::run() {
  // The group transaction spans batches until a commit; each batch is a savepoint in it.
  std::unique_ptr<RunStore::Transaction> group, batch;
  auto last_commit = Clock::now();
  bool at_batch_end = true;
  uint64_t done = 0;  // items taken off the queue and applied (or dropped after an error)
  const auto flush = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(flush_s_));
  auto commit_due = [&] { return Clock::now() - last_commit >= flush; };
  std::unique_lock lock(mutex_);
  while (true) {
    // Woken early only for these (see the header). Otherwise the writer comes by when a commit
    // is due and there is something to commit or take; with nothing, once per flush_s, and
    // takes what was queued meanwhile (whole batches: a batch reaches the queue at its end).
    auto urgent = [&] {
      return stopping_ || sync_target_ > committed_ || queue_.size() >= kWakeItems || (flush_s_ <= 0 && batch_closed());
    };
    const bool pending = !queue_.empty() || (group && at_batch_end);
    // With flush_s = 0 every batch end wakes the writer: idle, it need not come by at all.
    const auto idle_wait = flush_s_ > 0 ? flush : std::chrono::duration_cast<Clock::duration>(std::chrono::seconds(1));
    wake_.wait_until(lock, pending ? last_commit + flush : Clock::now() + idle_wait, urgent);
    if (!urgent() && !(commit_due() && (!queue_.empty() || (group && at_batch_end)))) continue;
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

    cpu_seconds_.store(thread_cpu_seconds(), std::memory_order_relaxed);
    lock.lock();
    if (failed && !error_) error_ = failed, failed_.store(true, std::memory_order_release);
    if (failed) queue_.clear();
    if (!group) committed_ = done;
    idle_.notify_all();
    if (stop && queue_.empty()) break;
  }
}

}  // namespace kmcts
