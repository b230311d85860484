#include "search/coordinator.hpp"

#include <algorithm>
#include <csignal>

#include <fmt/format.h>

#include "core/error.hpp"
#include "search/canonical.hpp"
#include "search/coordinator_state.hpp"

KMCTS_OPTION("search.budget", Int, 40, 1, 1000000, "Evaluations to spend, the seed kernel included.")
KMCTS_OPTION("search.workers", Int, 2, 1, 1024,
             "Trials in flight at once (each: an agent call, then an evaluation on a worker).")
KMCTS_OPTION("search.seed", Int, 0, 0, 9.0e15, "Seed of every random draw (counter-based, so runs are repeatable).")
KMCTS_OPTION("search.max_wall_s", Double, 0.0, 0.0, 1.0e7, "Stop selecting new work after this many seconds (0 = no limit).")
KMCTS_OPTION("search.strategy", String, "mcts", std::nullopt, std::nullopt, "Search strategy by name (mcts).")
KMCTS_OPTION("search.reward", String, "log_speedup", std::nullopt, std::nullopt, "Reward by name (log_speedup).")
KMCTS_OPTION("agents.planner", String, "rule", std::nullopt, std::nullopt, "Planner by name (rule).")
KMCTS_OPTION("agents.coder", String, "rule", std::nullopt, std::nullopt, "Coder by name (rule).")
KMCTS_OPTION("agents.debugger", String, "rule", std::nullopt, std::nullopt, "Debugger by name (rule).")
KMCTS_OPTION("agents.plans_per_call", Int, 4, 1, 64,
             "Plans one Planner call proposes; unused ones are queued on the node for later expansions.")
KMCTS_OPTION("evaluator.name", String, "cpu", std::nullopt, std::nullopt, "Evaluator by name (cpu, synthetic).")

namespace kmcts {
SearchParts SearchParts::from_config(const Problem& problem, const Config& c) {
  SearchParts p;
  p.evaluator = EvaluatorRegistry::instance().create("evaluator", c.get_string("evaluator.name"), problem, c);
  p.planner = PlannerRegistry::instance().create("planner", c.get_string("agents.planner"), c);
  p.coder = CoderRegistry::instance().create("coder", c.get_string("agents.coder"), c);
  p.debugger = DebuggerRegistry::instance().create("debugger", c.get_string("agents.debugger"), c);
  p.strategy = StrategyRegistry::instance().create("strategy", c.get_string("search.strategy"), c);
  p.reward = RewardRegistry::instance().create("reward", c.get_string("search.reward"), c);
  return p;
}

SearchSettings SearchSettings::from_config(const Config& c) {
  SearchSettings s;
  s.budget = static_cast<int>(c.get_int("search.budget"));
  s.workers = static_cast<int>(c.get_int("search.workers"));
  s.seed = static_cast<uint64_t>(c.get_int("search.seed"));
  s.plans_per_call = static_cast<int>(c.get_int("agents.plans_per_call"));
  s.max_wall_s = c.get_double("search.max_wall_s");
  return s;
}

Coordinator::State::State(const Problem& p, SearchSettings s, SearchParts pa, RunStore& st)
    : problem(p),
      settings(s),
      parts(std::move(pa)),
      store(st),
      threads(tbb::global_control::max_allowed_parallelism, static_cast<size_t>(2 * s.workers + 2)),
      agent_arena(s.workers),
      eval_arena(s.workers),
      progress(s.progress) {}

double Coordinator::State::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

void Coordinator::State::event(const std::string& kind, nlohmann::json payload) {
  store.append_event(EventRecord{next_seq(), elapsed(), kind, std::move(payload)});
}

NodeView Coordinator::State::view(const VariantGraph& g, int id) const {
  const NodeRecord& n = g.node(id);
  NodeView v;
  v.id = id;
  v.source = sources.at(n.hash);
  v.meta = n.meta;
  if (auto it = results.find(id); it != results.end()) v.result = it->second;
  for (int p : g.tree_path(id))
    if (!g.node(p).plan.empty()) v.plan_history.push_back(g.node(p).plan);
  return v;
}

Coordinator::Coordinator(const Problem& problem, SearchSettings settings, SearchParts parts, RunStore& store)
    : state_(std::make_unique<State>(problem, settings, std::move(parts), store)) {}

Coordinator::~Coordinator() = default;

}  // namespace kmcts
