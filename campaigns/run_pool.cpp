#include "campaigns/run_pool.hpp"

#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "search/coordinator.hpp"

namespace kmcts {

namespace {
std::atomic<bool> g_stop{false};
}  // namespace

void request_pool_stop() {
  g_stop.store(true);
  Coordinator::request_stop();
}

bool pool_stop_requested() { return g_stop.load(); }

void run_pool(size_t count, size_t workers, const std::function<void(size_t, size_t)>& task) {
  g_stop.store(false);
  std::mutex mutex;
  size_t next = 0;
  std::exception_ptr fatal;  // the first task's exception: stops the pool, rethrown after the join
  auto worker = [&](size_t w) {
    while (!g_stop.load()) {
      size_t index = 0;
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (next >= count || fatal) return;
        index = next++;
      }
      try {
        task(index, w);
      } catch (...) {  // nothing may escape a thread (std::terminate): the caller gets it
        std::lock_guard<std::mutex> lock(mutex);
        if (!fatal) fatal = std::current_exception();
        request_pool_stop();
        return;
      }
    }
  };
  std::vector<std::thread> threads;
  for (size_t w = 0; w < workers; ++w) threads.emplace_back(worker, w);
  std::atomic<bool> joined{false};
  std::thread reasserter([&joined] {
    while (!joined.load()) {
      if (g_stop.load()) Coordinator::request_stop();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  for (auto& t : threads) t.join();
  joined.store(true);
  reasserter.join();
  if (fatal) std::rethrow_exception(fatal);
}

}  // namespace kmcts
