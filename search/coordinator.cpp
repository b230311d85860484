#include "search/coordinator.hpp"

#include <algorithm>
#include <csignal>
#include <thread>
#include <tuple>

#include <fmt/format.h>

#include "core/error.hpp"
#include "hardware/kernelbench/torch_build.hpp"
#include "search/canonical.hpp"
#include "search/coordinator_state.hpp"
#include "search/mcts.hpp"
#include "search/memory_archive.hpp"
#include "core/cpus.hpp"

KMCTS_OPTION("search.budget", Int, 40, 1, 1000000, "Evaluations to spend, the seed kernel included.")
KMCTS_OPTION("search.workers", Int, 2, 1, 1024,
             "Trials in flight at once (each: an agent call, then an evaluation on a worker).")
KMCTS_OPTION("search.agent_slots", Int, 0, 0, 1024,
             "Agent calls at once, out of the search.workers trials (0 = search.workers: a trial keeps "
             "its slot until its evaluation is done). Fewer agent slots than workers lets the next "
             "agent call start while earlier variants compile and measure.")
KMCTS_OPTION("search.agent_watchers", Int, -1, -1, 1024,
             "Agent threads that, after a call, watch for the next one for 50 us before they sleep, so that "
             "handing them work costs the search's coordinator no system call (-1 = (usable CPUs - 2) / 2, none on 2 "
             "CPUs, where a watching thread would take the coordinator's core; 0 = none).")
KMCTS_OPTION("search.store_flush_s", Double, 0.2, 0.0, 3600.0,
             "The run store commits at most this often (and at the end), with the visit counts and "
             "values changed since the last commit: a run killed meanwhile loses at most this much "
             "finished work, which `kmcts resume` redoes. 0 = commit after every completion.")
KMCTS_OPTION("search.compile_slots", Int, 0, 0, 1024,
             "Compiles at once (0 = one per usable CPU: affinity mask and cgroup quota), at most the trials in flight (search.workers, or "
             "search.wave_size in deterministic mode). Compiles never hold a measurement slot.")
KMCTS_OPTION("search.measure_slots", Int, 0, 0, 1024,
             "Measurements at once; 0 = what the evaluator offers: one per GPU of evaluator.cuda.gpus, 1 on "
             "CPUs, which keeps timings honest (two kernels timed together share caches and memory bandwidth). "
             "At most the trials in flight.")
KMCTS_OPTION("search.seed", Int, 0, 0, 9.0e15, "Seed of every random draw (counter-based, so runs are repeatable).")
KMCTS_OPTION("search.max_wall_s", Double, 0.0, 0.0, 1.0e7, "Stop selecting new work after this many seconds (0 = no limit).")
KMCTS_OPTION("search.max_agent_calls", Int, 0, 0, 1.0e9, "Stop selecting new work after this many agent calls (0 = no limit).")
KMCTS_OPTION("search.max_tokens", Int, 0, 0, 9.0e15, "Stop selecting new work after this many LLM tokens, prompt + completion (0 = no limit).")
KMCTS_OPTION("search.max_dollars", Double, 0.0, 0.0, 1.0e9, "Stop selecting new work after this many dollars of LLM calls (0 = no limit).")
KMCTS_OPTION("search.agent_failure_share", Double, 1.0, 0.0, 1.0,
             "The run fails (exit 1, the cause in its summary) once this share of its agent calls has failed, "
             "counted after search.agent_failure_min_calls of them (1 = only when every call failed); a search "
             "that ends with every agent call failed fails whatever their number")
KMCTS_OPTION("search.agent_failure_min_calls", Int, 4, 1, 1000000,
             "Agent calls finished before search.agent_failure_share may stop the run")
KMCTS_OPTION("search.deterministic", Bool, false, std::nullopt, std::nullopt,
             "Lockstep waves: select search.wave_size jobs, wait for all, apply them in request order. "
             "With recorded or deterministic externals the graph is then identical for any --workers.")
KMCTS_OPTION("search.wave_size", Int, 4, 1, 1024,
             "Selections per wave in deterministic mode; it, not --workers, shapes the search there.")
KMCTS_OPTION("search.strategy", String, "mcts", std::nullopt, std::nullopt, "Search strategy: mcts, or a baseline for ablations: random, linear, beam, egreedy_tree.")
KMCTS_OPTION("search.reward", String, "log_speedup", std::nullopt, std::nullopt, "Reward: log_speedup (clipped log of the speedup) or rank (percentile among earlier variants, in [-1, 1]); failures get search.failure_penalty.")
KMCTS_OPTION("agents.backend", String, "rule", std::nullopt, std::nullopt,
             "Agents of every role left empty below: rule (offline moves in the tunable space), sim (the agent simulator: "
             "LLM-like refinements, rewrites, regressions and failures in the tunable space, see agents.sim.*), llm (an "
             "LLM endpoint, see agents.llm.*) or submissions (candidate files from agents.submissions.dir).")
KMCTS_OPTION("agents.planner", String, "", std::nullopt, std::nullopt,
             "Planner by name: rule, sim, llm, submissions, or sweep (every point of the tunable space once, in order: an "
             "exhaustive sweep); empty = agents.backend.")
KMCTS_OPTION("agents.coder", String, "", std::nullopt, std::nullopt, "Coder by name: rule, sim, llm or submissions; empty = agents.backend.")
KMCTS_OPTION("agents.debugger", String, "", std::nullopt, std::nullopt, "Debugger by name: rule, sim, llm or submissions; empty = agents.backend.")
KMCTS_OPTION("agents.plans_per_call", Int, 4, 1, 64,
             "Plans one Planner call proposes; unused ones are queued on the node for later expansions.")

namespace kmcts {

namespace detail {

NodeRecord node_stats(const NodeRecord& n) {
  // Designated: a meta left to its default would allocate an empty JSON object.
  return NodeRecord{.id = n.id, .status = n.status, .visits = n.visits, .debug_attempts = n.debug_attempts,
                    .value_sum = n.value_sum, .reward = n.reward, .speedup = n.speedup, .median_ns = n.median_ns,
                    .verdict = n.verdict, .meta = nlohmann::json()};
}

NodeRecord insert_row(const NodeRecord& n) {
  NodeRecord row = node_stats(n);
  row.depth = n.depth;
  row.created_seq = n.created_seq;
  return row;
}

}  // namespace detail

using detail::node_stats;

namespace {

// The agent a role's option names; empty = the backend's.
std::string agent_name(const Config& c, const char* key) {
  std::string name = c.get_string(key);
  return name.empty() ? c.get_string("agents.backend") : name;
}

}  // namespace

void SearchParts::check_names(const Config& c) {
  const std::string backend = c.get_string("agents.backend");
  if (backend != "rule" && backend != "sim" && backend != "llm" && backend != "submissions")
    throw InputError("agents.backend: unknown backend '" + backend + "' (known: rule, sim, llm, submissions)");
  PlannerRegistry::instance().check("planner", agent_name(c, "agents.planner"));
  CoderRegistry::instance().check("coder", agent_name(c, "agents.coder"));
  DebuggerRegistry::instance().check("debugger", agent_name(c, "agents.debugger"));
  StrategyRegistry::instance().check("strategy", c.get_string("search.strategy"));
  RewardRegistry::instance().check("reward", c.get_string("search.reward"));
  // A misspelt part is an error whatever the strategy (the baselines read none of them).
  ExpansionRuleRegistry::instance().check("expansion rule", c.get_string("search.expansion"));
  ExplorationScheduleRegistry::instance().check("exploration schedule", c.get_string("search.exploration_schedule"));
  RefinementRegistry::instance().check("refinement", c.get_string("search.refine"));
  ChainRuleRegistry::instance().check("chain rule", c.get_string("search.chain"));
  if (c.get_string("search.strategy") == "mcts")  // the baselines use none of these
    MctsStrategy::Parts::from_config(c);         // policy, pending, widening, backup, expansion (small objects)
  if (const std::string evaluator = c.get_string("evaluator.name"); evaluator != "auto")
    EvaluatorRegistry::instance().check("evaluator", evaluator);
}

void SearchParts::check_kernelbench_backend(const Problem& problem, const Config& c) {
  if (problem.kind != "kernelbench" || c.get_string("agents.llm.kernelbench_backend") != "hip") return;
  bool llm = false;
  for (const char* role : {"agents.planner", "agents.coder", "agents.debugger"}) llm = llm || agent_name(c, role) == "llm";
  if (!llm) return;  // no agent reads the prompts that ask for HIP
  const std::string python = c.get_string("evaluator.kernelbench.python");
  const TorchBuild torch = probe_torch_build(python);
  if (!torch.hip.empty() || torch.timed_out) return;  // a slow import says nothing of the build: the harness will tell
  throw InputError(fmt::format(
      "agents.llm.kernelbench_backend=hip asks the agents for HIP kernels built by hipcc on a ROCm build of torch, "
      "but evaluator.kernelbench.python ({}) has {}: run with a ROCm build of torch, or set "
      "agents.llm.kernelbench_backend=cuda or triton",
      python, torch.describe()));
}

SearchParts SearchParts::from_config(const Problem& problem, const Config& c) {
  check_names(c);
  check_kernelbench_backend(problem, c);
  SearchParts p;
  p.evaluator = make_evaluator(problem, c);
  p.planner = PlannerRegistry::instance().create("planner", agent_name(c, "agents.planner"), c);
  p.coder = CoderRegistry::instance().create("coder", agent_name(c, "agents.coder"), c);
  p.debugger = DebuggerRegistry::instance().create("debugger", agent_name(c, "agents.debugger"), c);
  p.strategy = StrategyRegistry::instance().create("strategy", c.get_string("search.strategy"), c);
  p.reward = RewardRegistry::instance().create("reward", c.get_string("search.reward"), c);
  return p;
}

SearchSettings SearchSettings::from_config(const Config& c) {
  SearchSettings s;
  s.budget = static_cast<int>(c.get_int("search.budget"));
  s.workers = static_cast<int>(c.get_int("search.workers"));
  const int agent_slots = static_cast<int>(c.get_int("search.agent_slots"));
  s.agent_slots = agent_slots > 0 ? std::min(agent_slots, s.workers) : s.workers;
  s.agent_watchers = static_cast<int>(c.get_int("search.agent_watchers"));
  s.store_flush_s = c.get_double("search.store_flush_s");
  s.deterministic = c.get_bool("search.deterministic");
  s.wave_size = static_cast<int>(c.get_int("search.wave_size"));
  int compile_slots = static_cast<int>(c.get_int("search.compile_slots"));
  s.compile_slots = compile_slots > 0 ? compile_slots : usable_cpus();
  // A trial compiles one variant at a time: slots beyond the trials in flight would never run
  // a compile, and each is a TBB thread that spins for work while idle.
  s.compile_slots = std::min(s.compile_slots, s.trials_at_once());
  s.measure_slots = std::min(static_cast<int>(c.get_int("search.measure_slots")), s.trials_at_once());  // 0 stays 0
  s.seed = static_cast<uint64_t>(c.get_int("search.seed"));
  s.plans_per_call = static_cast<int>(c.get_int("agents.plans_per_call"));
  s.max_wall_s = c.get_double("search.max_wall_s");
  s.max_agent_calls = c.get_int("search.max_agent_calls");
  s.max_tokens = c.get_int("search.max_tokens");
  s.max_dollars = c.get_double("search.max_dollars");
  s.agent_failure_share = c.get_double("search.agent_failure_share");
  s.agent_failure_min_calls = static_cast<int>(c.get_int("search.agent_failure_min_calls"));
  return s;
}

namespace {

/// search.measure_slots = 0: the evaluator's own count (replay builds a State without one).
SearchSettings with_measure_slots(SearchSettings s, const Evaluator* evaluator) {
  if (s.measure_slots <= 0) s.measure_slots = evaluator ? std::max(1, evaluator->measure_slots()) : 1;
  s.measure_slots = std::min(s.measure_slots, s.trials_at_once());  // one measurement per trial at a time
  return s;
}

}  // namespace

Coordinator::State::State(const Problem& p, SearchSettings s, SearchParts pa, RunStore& st)
    : problem(p),
      settings(with_measure_slots(s, pa.evaluator.get())),
      parts(std::move(pa)),
      store(st),
      writer(st, s.store_flush_s),
      threads(static_cast<size_t>(settings.compile_slots + settings.measure_slots + 1)),
      agents("agents", s.agent_slots, s.agent_watchers),
      measurements("measurements", settings.measure_slots),
      compiles("compiles", s.compile_slots),
      progress(s.progress) {
  memory_taken = st.run_info();
}

const std::string* Coordinator::State::planner_memory() {
  if (!memory_resolved) {  // the first plan call: the seed (node 0) is measured by now
    const auto& seed = result_of(0);
    memory = memory_prompt_after_seed(memory_taken, seed ? seed->details : nlohmann::json::object());
    memory_resolved = true;
  }
  return &memory;
}

double Coordinator::State::elapsed() const {
  return elapsed_before + std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

void Coordinator::State::event(const std::string& kind, nlohmann::json payload) {
  writer.write([e = EventRecord{next_seq(), elapsed(), kind, std::move(payload)}](RunStore& st) { st.append_event(e); });
}

void Coordinator::State::add_node(const NodeRecord& n) {
  NodeRecord fixed = detail::insert_row(n);
  fixed.hash = n.hash;
  fixed.origin = n.origin;
  fixed.plan = n.plan;
  writer.write([n = std::move(fixed), meta = at_node(metas, n.id)](RunStore& st) mutable {
    n.meta = *meta;
    st.add_node(n);
  });
}

const std::shared_ptr<const nlohmann::json>& Coordinator::State::meta(const VariantGraph& g, int id) const {
  auto& shared = at_node(metas, id);
  if (!shared) shared = std::make_shared<const nlohmann::json>(g.node(id).meta);
  return shared;
}

void Coordinator::State::flush(const VariantGraph& g) {
  auto [nodes, edges] = dirty.drain();
  // One hand-off to the writer for the whole flush, not one per row, and only the statistics
  // a search changes after a node's evaluation (which update_node wrote in full).
  struct Visits {
    int id, visits;
    double value_sum;
    int debug_attempts;
  };
  std::vector<Visits> stats;
  stats.reserve(nodes.size());
  for (int id : nodes) {
    const NodeRecord& n = g.node(id);
    stats.push_back({id, n.visits, n.value_sum, n.debug_attempts});
  }
  std::vector<std::tuple<int, int, int>> visits;
  visits.reserve(edges.size());
  for (const auto& [parent, child] : edges)
    if (const EdgeRecord* e = g.edge(parent, child)) visits.emplace_back(parent, child, e->visits);
  if (!stats.empty() || !visits.empty())
    writer.write([stats = std::move(stats), visits = std::move(visits)](RunStore& st) {
      for (const Visits& n : stats) st.update_node_visits(n.id, n.visits, n.value_sum, n.debug_attempts);
      for (const auto& [parent, child, count] : visits) st.update_edge_visits(parent, child, count);
    });
  last_flush = elapsed();
}

void Coordinator::State::rewrite_all(const VariantGraph& g) {
  std::vector<NodeRecord> stats;  // every mutable field, not only the statistics a flush writes
  stats.reserve(static_cast<size_t>(g.size()));
  for (int n = 0; n < g.size(); ++n) {
    stats.push_back(node_stats(g.node(n)));
    g.for_each_child(n, [this, n](int c, const EdgeRecord&) {
      dirty.edge(n, c);
      return true;
    });
  }
  writer.write([stats = std::move(stats)](RunStore& st) {
    for (const NodeRecord& n : stats) st.update_node(n);
  });
}

void Coordinator::State::link_plan(const NodeRecord& n, int tree_parent) {
  const auto& above = at_node(plan_links, tree_parent);
  at_node(plan_links, n.id) = n.plan.empty() ? above : std::make_shared<const PlanLink>(PlanLink{above, n.plan});
}

using detail::borrow;

NodeView Coordinator::State::view(const VariantGraph& g, int id) const {
  NodeView v;
  v.id = id;
  v.source_text = borrow(source_of(id));
  v.meta_json = borrow(meta(g, id));
  v.result = borrow(result_of(id));
  v.plan_link = borrow(plan_links.at(static_cast<size_t>(id)));
  return v;
}

NodeView Coordinator::State::brief_view(const VariantGraph& g, int id) const {
  const NodeRecord& n = g.node(id);
  NodeView v;
  v.id = id;
  v.meta_json = borrow(meta(g, id));
  v.result = borrow(result_of(id));
  if (!n.plan.empty()) v.plan_link = borrow(plan_links.at(static_cast<size_t>(id)));  // its plan is the one that made it
  return v;
}

Coordinator::Coordinator(const Problem& problem, SearchSettings settings, SearchParts parts, RunStore& store)
    : state_(std::make_unique<State>(problem, settings, std::move(parts), store)) {}

Coordinator::~Coordinator() = default;

}  // namespace kmcts
