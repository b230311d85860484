#include "search/thread_pool.hpp"
#include "core/cpus.hpp"

#include <algorithm>

namespace kmcts {

namespace {
void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}
}  // namespace

ThreadPool::ThreadPool(std::string name, int threads, int watchers, std::chrono::microseconds watch)
    : name_(std::move(name)), watch_(watch) {
  const int n = std::max(1, threads);
  const int cores = usable_cpus();
  max_watchers_ = std::clamp(watchers >= 0 ? watchers : (cores - 2) / 2, 0, n);
  for (int i = 0; i < n; ++i) threads_.emplace_back([this] { work(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    jobs_.clear();
    queued_.store(0, std::memory_order_release);
  }
  wake_.notify_all();
  for (auto& t : threads_) t.join();
}

void ThreadPool::submit(std::function<void()> job) {
  bool wake;
  {
    std::lock_guard lock(mutex_);
    jobs_.push_back(std::move(job));
    queued_.store(jobs_.size(), std::memory_order_release);
    // A watching thread takes the lock before it sleeps and finds the job then: wake a sleeper
    // only for the jobs the watchers cannot take.
    wake = sleeping_ > 0 && jobs_.size() > static_cast<size_t>(watching_);
  }
  if (wake) {
    wakes_.fetch_add(1, std::memory_order_relaxed);
    wake_.notify_one();
  }
}

bool ThreadPool::watch_for_job() {
  const auto until = std::chrono::steady_clock::now() + watch_;
  for (int spin = 0;; ++spin) {
    if (queued_.load(std::memory_order_acquire) > 0 || stopping_.load(std::memory_order_acquire)) return true;
    if (spin % 64 == 63 && std::chrono::steady_clock::now() >= until) return false;
    cpu_relax();
  }
}

void ThreadPool::work() {
  bool may_watch = false;  // a thread watches only after a job, not from its start
  while (true) {
    std::function<void()> job;
    {
      std::unique_lock lock(mutex_);
      if (may_watch && jobs_.empty() && !stopping_ && watching_ < max_watchers_) {
        ++watching_;
        lock.unlock();
        watch_for_job();
        lock.lock();
        --watching_;  // it takes a queued job below, under the lock, or sleeps
      }
      ++sleeping_;
      wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      --sleeping_;
      if (stopping_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
      queued_.store(jobs_.size(), std::memory_order_release);
    }
    job();
    may_watch = true;
  }
}

}  // namespace kmcts
