#pragma once
// Dedicated threads for agent calls. An agent call spends nearly all its time waiting (on an
// LLM reply, multiplexed by the HTTP transport's one thread); on TBB each wait would hold one of
// TBB's threads (REFERENCE.md: blocking waits belong in a dedicated pool, not in TBB), so agent
// calls get their own threads and TBB keeps its threads for compiles and measurements.
//
// A thread that finishes a job watches the queue for a short while before it sleeps, so a
// submit that finds a watching thread makes no system call: waking a sleeping thread was 16% of
// the coordinator's CPU at 10^5 nodes with fast agents (bench/results/engine.md). Only where the
// machine has cores to spare: by default (usable CPUs - 2) / 2 threads at once (core/cpus.hpp), none on 2 CPUs,
// where a watching thread would take the coordinator's core.
#include <atomic>
#include <chrono>
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
  /// `watchers`: how many threads may watch the queue at once before sleeping (-1: from the
  /// machine's cores); `watch`: for how long.
  ThreadPool(std::string name, int threads, int watchers = -1,
             std::chrono::microseconds watch = std::chrono::microseconds(50));
  /// Lets running jobs finish, drops queued ones (their owner is going away), joins the threads.
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  /// Runs `job` on a pool thread as soon as one is free (FIFO). The job must not throw.
  void submit(std::function<void()> job);
  int slots() const { return static_cast<int>(threads_.size()); }
  const std::string& name() const { return name_; }
  /// How many submits had to wake a sleeping thread (a system call), for the engine benchmark.
  long wakes() const { return wakes_.load(std::memory_order_relaxed); }

 private:
  void work();
  bool watch_for_job();  // true once a job is queued (or the pool stops), false after the watch ends
  std::string name_;
  int max_watchers_;
  std::chrono::microseconds watch_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  std::atomic<size_t> queued_{0};  // jobs_.size(), read by watching threads without the lock
  int watching_ = 0, sleeping_ = 0;  // under mutex_: threads watching the queue, threads in their wait
  std::atomic<long> wakes_{0};
  std::atomic<bool> stopping_{false};  // written under mutex_; read by watching threads without it
  std::vector<std::thread> threads_;
};

}  // namespace kmcts
