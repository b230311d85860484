// Rule agents with a simulated LLM latency, for the pipeline benchmark. The engine has no
// agent-latency option (real agents are slow on their own), so the bench registers
// "bench_slow_rule" Planner and Coder implementations that sleep, then delegate to the
// registered "rule" ones. The sleep goes in the Coder by default: the Coder runs once per
// expansion, while the Planner is skipped whenever a queued plan from an earlier call is
// used, so a Planner-only sleep would make "agent latency" depend on plans_per_call.
#include <atomic>
#include <chrono>
#include <thread>

#include "agents/roles.hpp"
#include "core/options.hpp"
#include "core/rng.hpp"

KMCTS_OPTION("bench.planner_latency_ms", Double, 0.0, 0.0, 600000.0,
             "Benchmark only: sleep before every bench_slow_rule Planner call (ms).")
KMCTS_OPTION("bench.coder_min_ms", Double, 0.0, 0.0, 600000.0,
             "Benchmark only: bench_slow_rule Coder sleeps uniformly in [min, max] ms per call.")
KMCTS_OPTION("bench.coder_max_ms", Double, 0.0, 0.0, 600000.0,
             "Benchmark only: upper end of the bench_slow_rule Coder's sleep (ms).")

namespace kmcts::bench {
namespace {

void sleep_ms(double ms) {
  if (ms > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
}

class SlowPlanner final : public Planner {
 public:
  explicit SlowPlanner(const Config& c)
      : inner_(PlannerRegistry::instance().create("planner", "rule", c)),
        latency_ms_(c.get_double("bench.planner_latency_ms")) {}
  PlanResult propose(const PlanContext& context) override {
    sleep_ms(latency_ms_);
    return inner_->propose(context);
  }

 private:
  std::unique_ptr<Planner> inner_;
  double latency_ms_;
};

class SlowCoder final : public Coder {
 public:
  explicit SlowCoder(const Config& c)
      : inner_(CoderRegistry::instance().create("coder", "rule", c)),
        min_ms_(c.get_double("bench.coder_min_ms")),
        max_ms_(std::max(min_ms_, c.get_double("bench.coder_max_ms"))) {}
  CodeResult write(const Problem& problem, const NodeView& parent, const Plan& plan) override {
    // Called from several agent threads at once: each call takes its own draw number.
    CounterRng rng(0x5104, calls_.fetch_add(1));
    sleep_ms(min_ms_ + (max_ms_ - min_ms_) * rng.uniform());
    return inner_->write(problem, parent, plan);
  }

 private:
  std::unique_ptr<Coder> inner_;
  double min_ms_, max_ms_;
  std::atomic<uint64_t> calls_{0};
};

}  // namespace
}  // namespace kmcts::bench

KMCTS_REGISTER(kmcts::PlannerRegistry, "bench_slow_rule", [](const kmcts::Config& c) -> std::unique_ptr<kmcts::Planner> {
  return std::make_unique<kmcts::bench::SlowPlanner>(c);
})
KMCTS_REGISTER(kmcts::CoderRegistry, "bench_slow_rule", [](const kmcts::Config& c) -> std::unique_ptr<kmcts::Coder> {
  return std::make_unique<kmcts::bench::SlowCoder>(c);
})
