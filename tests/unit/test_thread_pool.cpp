// The agent-call thread pool, the completion queue and the coordinator's dirty set.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "search/completion_queue.hpp"
#include "search/coordinator_state.hpp"
#include "search/thread_pool.hpp"

using namespace kmcts;

TEST_CASE("thread pool: every thread runs a blocking job at once; queued jobs run in order") {
  ThreadPool pool("test", 4);
  std::mutex m;
  std::condition_variable cv;
  int running = 0, peak = 0;
  bool release = false;
  std::vector<int> order;
  for (int i = 0; i < 4; ++i)
    pool.submit([&] {
      std::unique_lock lock(m);
      peak = std::max(peak, ++running);
      cv.notify_all();
      cv.wait_for(lock, std::chrono::seconds(10), [&] { return release; });
      --running;
    });
  for (int i = 0; i < 6; ++i)  // wait for a free thread
    pool.submit([&, i] {
      std::lock_guard lock(m);
      order.push_back(i);
      cv.notify_all();
    });
  {
    std::unique_lock lock(m);
    cv.wait_for(lock, std::chrono::seconds(10), [&] { return running == 4; });
    CHECK(peak == 4);
    CHECK(order.empty());
    release = true;
    cv.notify_all();
    cv.wait_for(lock, std::chrono::seconds(10), [&] { return order.size() == 6; });
  }
  REQUIRE(order.size() == 6);
  // Four threads take the queued jobs in order; each job's own run may interleave.
  std::vector<int> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  CHECK(sorted == std::vector<int>{0, 1, 2, 3, 4, 5});
}

TEST_CASE("thread pool: jobs from several submitters all run, with threads going idle in between") {
  std::atomic<int> done{0};
  {
    ThreadPool pool("test", 3);
    std::vector<std::thread> submitters;
    for (int t = 0; t < 3; ++t)
      submitters.emplace_back([&] {
        for (int i = 0; i < 2000; ++i) {
          pool.submit([&] { done.fetch_add(1); });
          if (i % 100 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));  // let threads park
        }
      });
    for (auto& s : submitters) s.join();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (done.load() < 6000 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  CHECK(done.load() == 6000);
}

TEST_CASE("thread pool: destruction lets the running job finish and drops queued ones") {
  std::atomic<int> ran{0};
  std::atomic<bool> started{false};
  {
    ThreadPool pool("test", 1);
    pool.submit([&] {
      started = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      ran.fetch_add(1);
    });
    for (int i = 0; i < 5; ++i) pool.submit([&] { ran.fetch_add(100); });
    while (!started) std::this_thread::yield();
  }
  CHECK(ran.load() == 1);
}

TEST_CASE("completion queue: arrival order, try_pop without waiting, counted sleeps") {
  CompletionQueue<int> q;
  CHECK_FALSE(q.try_pop().has_value());
  long sleeps = 0;
  CHECK_FALSE(q.pop_for(std::chrono::milliseconds(1), &sleeps).has_value());
  CHECK(sleeps == 1);
  q.push(1);
  q.push(2);
  CHECK(q.try_pop() == 1);
  CHECK(q.pop_for(std::chrono::milliseconds(1), &sleeps) == 2);
  CHECK(sleeps == 1);  // an item was there: no sleep
  std::thread producer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    q.push(3);
  });
  CHECK(q.pop_for(std::chrono::seconds(10), &sleeps) == 3);
  CHECK(sleeps == 2);
  producer.join();
}

TEST_CASE("dirty set: each node and edge once, a child's second parent too, drained sorted and cleared") {
  detail::DirtySet d;
  d.node(5), d.node(2), d.node(5);
  d.edge(2, 5), d.edge(2, 5);
  d.edge(7, 5), d.edge(7, 5);  // a second parent of 5 (a transposition)
  d.edge(9, 5), d.edge(2, 5), d.edge(9, 5);  // and a third
  d.edge(0, 2);
  auto [nodes, edges] = d.drain();
  CHECK(nodes == std::vector<int>{2, 5});
  CHECK(edges == std::vector<std::pair<int, int>>{{0, 2}, {2, 5}, {7, 5}, {9, 5}});
  auto [none, no_edges] = d.drain();
  CHECK(none.empty());
  CHECK(no_edges.empty());
  d.edge(7, 5);  // marks are cleared
  d.edge(2, 5);
  auto [n2, e2] = d.drain();
  CHECK(e2 == std::vector<std::pair<int, int>>{{2, 5}, {7, 5}});
}

TEST_CASE("thread pool: a thread watching the queue takes the next job without being woken") {
  // One thread that may watch for 10 s: after the first job (which wakes it from its sleep at
  // start, if it got there first) each job submitted once the last has run finds it watching or not yet asleep, so no
  // submit makes the system call that wakes a sleeping thread.
  std::atomic<int> done{0};
  ThreadPool pool("test", 1, /*watchers=*/1, std::chrono::seconds(10));
  for (int i = 0; i < 200; ++i) {
    pool.submit([&] { done.fetch_add(1); });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (done.load() <= i && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  }
  CHECK(done.load() == 200);
  CHECK(pool.wakes() <= 1);
}

TEST_CASE("thread pool: watching threads and sleeping ones share bursts of jobs; none is lost") {
  // Two of four threads may watch: a burst larger than the watchers must wake sleepers, and a
  // pool being destroyed must not wait out a watch (10 s here).
  std::atomic<int> done{0};
  const auto start = std::chrono::steady_clock::now();
  {
    ThreadPool pool("test", 4, /*watchers=*/2, std::chrono::seconds(10));
    for (int burst = 0; burst < 50; ++burst) {
      for (int i = 0; i < 7; ++i) pool.submit([&] { done.fetch_add(1); });
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (done.load() < 7 * (burst + 1) && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
      REQUIRE(done.load() == 7 * (burst + 1));
    }
    CHECK(pool.wakes() >= 1);
  }
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(8));
}
