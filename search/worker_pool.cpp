#include "search/worker_pool.hpp"
#include "core/cpus.hpp"

#include <algorithm>
#include <thread>

namespace kmcts {

WorkerPool::WorkerPool(std::string name, int slots)
    : name_(std::move(name)), slots_(std::max(1, slots)), arena_(slots_, /*reserved_for_masters=*/0) {}

WorkerPool::~WorkerPool() {
  for (int n = outstanding_->load(); n != 0; n = outstanding_->load()) outstanding_->wait(n);
}

void WorkerPool::submit(std::function<void()> job) {
  outstanding_->fetch_add(1);
  arena_.enqueue([count = outstanding_, job = std::move(job)] {
    job();
    if (count->fetch_sub(1) == 1) count->notify_all();
  });
}

ThreadBudget::ThreadBudget(size_t threads)
    : control_(std::make_unique<tbb::global_control>(
          tbb::global_control::max_allowed_parallelism,
          std::max<size_t>(threads, static_cast<size_t>(std::max(2, usable_cpus()))))) {}

}  // namespace kmcts
