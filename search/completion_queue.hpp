#pragma once
// Workers post completions here; the coordinator thread pops them in arrival order.
// (Not tbb::concurrent_bounded_queue: the coordinator needs a timed wait so it can
// notice a stop request or the wall-clock budget while jobs are still running.)
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
    }
    ready_.notify_one();
  }

  std::optional<T> pop_for(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    if (!ready_.wait_for(lock, timeout, [&] { return !items_.empty(); })) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    return item;
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<T> items_;
};

}  // namespace kmcts
