#include "search/worker_pool.hpp"

#include <algorithm>
#include <thread>

namespace kmcts {

WorkerPool::WorkerPool(std::string name, int slots)
    : name_(std::move(name)), slots_(std::max(1, slots)), arena_(slots_, /*reserved_for_masters=*/0) {}

WorkerPool::~WorkerPool() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [this] { return outstanding_ == 0; });
}

void WorkerPool::submit(std::function<void()> job) {
  {
    std::lock_guard lock(mutex_);
    ++outstanding_;
  }
  arena_.enqueue([this, job = std::move(job)] {
    job();
    std::lock_guard lock(mutex_);
    if (--outstanding_ == 0) idle_.notify_all();
  });
}

ThreadBudget::ThreadBudget(size_t threads)
    : control_(std::make_unique<tbb::global_control>(
          tbb::global_control::max_allowed_parallelism,
          std::max<size_t>(threads, std::max(2u, std::thread::hardware_concurrency())))) {}

}  // namespace kmcts
