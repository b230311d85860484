#pragma once
// Dedicated threads for agent calls. An agent call spends nearly all its time waiting (on an
// LLM reply, multiplexed by the HTTP transport's one thread); on TBB each wait would hold one of
// TBB's threads (REFERENCE.md: blocking waits belong in a dedicated pool, not in TBB), so agent
// calls get their own threads and TBB keeps its threads for compiles and measurements.
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace kmcts {

class ThreadPool {
 public:
  ThreadPool(std::string name, int threads);
  /// Lets running jobs finish, drops queued ones (their owner is going away), joins the threads.
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  /// Runs `job` on a pool thread as soon as one is free (FIFO). The job must not throw.
  void submit(std::function<void()> job);
  int slots() const { return static_cast<int>(threads_.size()); }
  const std::string& name() const { return name_; }

 private:
  void work();
  std::string name_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace kmcts
