#pragma once
// A fixed number of slots for blocking jobs (agent calls, compiles, measurements) on TBB.
// Blocking bodies each hold a TBB thread for their whole duration, so the pool raises
// TBB's thread limit to cover every slot (REFERENCE.md: with `unlimited` function nodes
// only as many bodies run as TBB has threads) and reserves no arena slot for an external
// thread: task_arena(N) alone keeps one of its N slots for a master that never joins,
// which would run only N-1 jobs at once.
#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>

namespace kmcts {

class WorkerPool {
 public:
  WorkerPool(std::string name, int slots);
  /// Waits for the jobs already submitted (they reference what their owner holds; a TBB
  /// arena alone would let them run on after it is gone).
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;
  /// Runs `job` on a pool thread as soon as a slot is free (FIFO among waiting jobs).
  /// The job must not throw.
  void submit(std::function<void()> job);
  int slots() const { return slots_; }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  int slots_;
  tbb::task_arena arena_;
  // Jobs submitted and not finished, counted without a lock so that a submit and a job's end
  // never contend. Each job holds the counter, so its last touch of it (the notify that wakes
  // the destructor) never outlives it.
  std::shared_ptr<std::atomic<int>> outstanding_ = std::make_shared<std::atomic<int>>(0);
};

/// Keeps TBB's thread limit at least `threads` while alive (one per pool slot, summed over
/// all pools of a search, plus the coordinator). TBB applies the smallest limit among live
/// global_control objects, so a process holds one ThreadBudget per search at a time.
class ThreadBudget {
 public:
  explicit ThreadBudget(size_t threads);

 private:
  std::unique_ptr<tbb::global_control> control_;
};

}  // namespace kmcts
