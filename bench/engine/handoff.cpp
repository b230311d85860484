// What one thread hand-off costs on this machine: two threads pass a token back and forth
// (std::atomic wait/notify, which sleeps in the kernel when the token is not there), and each
// reports its CPU time per round trip. Run free (the scheduler puts the threads on two CPUs,
// so each wake-up reaches an idle CPU) and with both threads on one CPU. The coordinator hands
// work off like this at least twice per trial; the figure says how much of its CPU time per
// event a machine charges for that (its figures: engine benchmark v6, in git history:
// git show 081056b:bench/results/2026-11-30-engine-v6.md).
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <thread>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "core/clock.hpp"

using kmcts::thread_cpu_seconds;

namespace {

void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

struct Result {
  double main_us, other_us, wall_us;
};

Result ping_pong(int rounds, bool one_cpu) {
  std::atomic<int> turn{0};  // 1: the other thread's turn, 0: the sender's
  double other_cpu = 0;
  std::thread other([&] {
    if (one_cpu) pin(0);
    const double c0 = thread_cpu_seconds();
    for (int i = 0; i < rounds; ++i) {
      turn.wait(0);
      turn.store(0);
      turn.notify_one();
    }
    other_cpu = thread_cpu_seconds() - c0;
  });
  if (one_cpu) pin(0);
  const double c0 = thread_cpu_seconds();
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < rounds; ++i) {
    turn.store(1);
    turn.notify_one();
    turn.wait(1);
  }
  const double main_cpu = thread_cpu_seconds() - c0;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  other.join();
  return {1e6 * main_cpu / rounds, 1e6 * other_cpu / rounds, 1e6 * wall / rounds};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Thread hand-off cost: CPU time per round trip between two threads"};
  int rounds = 100000;
  app.add_option("--rounds", rounds, "Round trips per case")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  fmt::print("| threads | CPU us per round trip, sender | CPU us, other thread | wall us per round trip |\n|---|---|---|---|\n");
  for (bool one_cpu : {false, true}) {
    Result r = ping_pong(rounds, one_cpu);
    fmt::print("| {} | {:.2f} | {:.2f} | {:.2f} |\n", one_cpu ? "both on CPU 0" : "free (two CPUs)", r.main_us, r.other_us,
               r.wall_us);
  }
}
