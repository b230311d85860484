// Every slot of a pool runs a blocking job at once, even with more slots than cores.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "search/worker_pool.hpp"

using namespace kmcts;

namespace {

// Submits `jobs` jobs that each block until `slots` of them run at the same time (or a
// generous deadline passes) and returns the most that ever ran together.
int peak_concurrency(int slots, int jobs) {
  ThreadBudget budget(static_cast<size_t>(slots) + 1);
  WorkerPool pool("test", slots);
  std::mutex m;
  std::condition_variable cv;
  int running = 0, peak = 0, done = 0;
  for (int i = 0; i < jobs; ++i)
    pool.submit([&] {
      std::unique_lock lock(m);
      peak = std::max(peak, ++running);
      cv.notify_all();
      cv.wait_for(lock, std::chrono::seconds(10), [&] { return running >= slots || done > 0; });
      --running;
      ++done;
      cv.notify_all();
    });
  std::unique_lock lock(m);
  cv.wait_for(lock, std::chrono::seconds(30), [&] { return done == jobs; });
  CHECK(done == jobs);
  return peak;
}

}  // namespace

TEST_CASE("worker pool: N slots run N blocking jobs at once, never more") {
  CHECK(peak_concurrency(1, 3) == 1);
  CHECK(peak_concurrency(2, 4) == 2);
  CHECK(peak_concurrency(6, 6) == 6);  // more slots than this 2-core machine has cores
}
