#pragma once
// Workers post completions here; the coordinator thread pops them in arrival order.
// (Not tbb::concurrent_bounded_queue: the coordinator needs a timed wait so it can
// notice a stop request or the wall-clock budget while jobs are still running.)
//
// The coordinator does not poll an empty queue before it sleeps: polling with 20 yields cut
// its sleeps from 0.4 to 0.01 per event on the oversubscribed 2-core dev VM, but on the idle
// 16-core GPU host, where a yield returns at once, its CPU per event was no lower
// (engine benchmark v6, in git history: git show 081056b:bench/results/2026-11-30-engine-v6.md).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>

namespace kmcts {

template <class T>
class CompletionQueue {
 public:
  void push(T item) {
    {
      std::lock_guard lock(mutex_);
      items_.push_back(std::move(item));
      size_.store(items_.size(), std::memory_order_release);
    }
    ready_.notify_one();  // no system call unless the coordinator sleeps
  }

  /// The next completion if one is queued.
  std::optional<T> try_pop() {
    if (size_.load(std::memory_order_acquire) == 0) return std::nullopt;
    std::lock_guard lock(mutex_);
    return take();
  }

  /// The next completion, or nothing after `timeout`. `sleeps`, when given, counts the
  /// times the caller had to sleep.
  std::optional<T> pop_for(std::chrono::milliseconds timeout, long* sleeps = nullptr) {
    std::unique_lock lock(mutex_);
    if (items_.empty()) {
      if (sleeps) ++*sleeps;
      if (!ready_.wait_for(lock, timeout, [&] { return !items_.empty(); })) return std::nullopt;
    }
    return take();
  }

 private:
  std::optional<T> take() {  // under mutex_, with an item queued (one consumer)
    T item = std::move(items_.front());
    items_.pop_front();
    size_.store(items_.size(), std::memory_order_release);
    return item;
  }

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<T> items_;
  std::atomic<size_t> size_{0};  // items_.size(), read by try_pop without the lock
};

}  // namespace kmcts
