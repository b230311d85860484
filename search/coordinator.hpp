#pragma once
// The coordinator: one thread, the only writer of the variant graph and the run store
// (whose writes it hands to a StoreWriter thread).
// It asks the strategy for work whenever a slot frees up, runs agent calls on dedicated
// threads and compiles and measurements on TBB arenas (blocking work never runs on the
// coordinator), and applies
// completions one at a time, in arrival order; each applied completion is an event.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "agents/roles.hpp"
#include "core/problem.hpp"
#include "hardware/evaluator.hpp"
#include "search/reward.hpp"
#include "search/run_store.hpp"
#include "search/strategy.hpp"
#include "search/variant_graph.hpp"

namespace kmcts {

struct SearchParts {
  std::unique_ptr<Evaluator> evaluator;
  std::unique_ptr<Planner> planner;
  std::unique_ptr<Coder> coder;
  std::unique_ptr<Debugger> debugger;
  std::unique_ptr<Strategy> strategy;
  std::unique_ptr<Reward> reward;
  /// Builds every part from the names in the config (unknown names are InputErrors).
  static SearchParts from_config(const Problem& problem, const Config& config);
  /// The same checks of every name the config gives (strategy and its parts, reward, agents,
  /// evaluator), with nothing built: what `kmcts config` validates beyond the options' types.
  static void check_names(const Config& config);
  /// A KernelBench search whose LLM agents are asked for HIP kernels
  /// (agents.llm.kernelbench_backend=hip) needs a ROCm build of torch in the harness's
  /// interpreter: refused with an InputError naming the torch found, before any agent call.
  static void check_kernelbench_backend(const Problem& problem, const Config& config);
};

struct SearchSettings {
  int budget = 40;            // evaluations, the seed kernel included
  int workers = 2;            // trials in flight (each: agent call, then evaluation)
  int agent_slots = 2;        // of those, in their agent call at once (<= workers)
  int agent_watchers = -1;    // agent threads watching for work before they sleep (-1: from the cores)
  double store_flush_s = 0.5; // path statistics reach the store at most this often
  int compile_slots = 2;      // compiles at once (<= trials_at_once())
  int measure_slots = 0;      // measurements at once; 0 = the evaluator's measure_slots() (<= trials_at_once())
  uint64_t seed = 0;
  int plans_per_call = 4;
  double max_wall_s = 0;      // 0 = no limit (here and below)
  int64_t max_agent_calls = 0;
  int64_t max_tokens = 0;
  double max_dollars = 0;
  double agent_failure_share = 1.0;  // of the agent calls finished: failing beyond it fails the run
  int agent_failure_min_calls = 4;
  bool progress = true;
  bool deterministic = false; // lockstep waves, applied in request order
  int wave_size = 4;          // selections per wave in deterministic mode
  /// Trials in flight at most: a wave in deterministic mode, else the workers.
  int trials_at_once() const { return deterministic ? std::max(workers, wave_size) : workers; }
  static SearchSettings from_config(const Config& config);
};

class Coordinator {
 public:
  Coordinator(const Problem& problem, SearchSettings settings, SearchParts parts, RunStore& store);
  ~Coordinator();
  /// Runs the search to its budget; returns the summary (also written by the store).
  nlohmann::json run();
  /// Continues the run recorded in the store given to the constructor: re-applies its
  /// event log (the store writer muted), cancels agent calls that were in flight, evaluates again
  /// the variants whose measurement was lost, then searches on to the budget.
  nlohmann::json resume();
  /// Thread- and signal-safe: finish in-flight work, then stop.
  static void request_stop();
  /// Thread- and signal-safe, for every search of the process from now on: stop at once
  /// without finishing the run. What was applied is written, work in flight is dropped, and
  /// the store keeps the run as running, so `kmcts resume` continues it and redoes what was in
  /// flight. The summary's status is "suspended". For evaluations that can no longer run
  /// anywhere (every MPI worker lost).
  static void request_suspend();

  const VariantGraph& graph() const { return graph_; }

  struct State;  // defined in coordinator_state.hpp

 private:
  nlohmann::json loop(bool seed_done);
  std::unique_ptr<State> state_;
  VariantGraph graph_;
};

}  // namespace kmcts
