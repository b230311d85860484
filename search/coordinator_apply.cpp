// Applying completions to the graph, the strategy and the store, and starting jobs. The
// live loop (coordinator_loop.cpp) and the replay (replay.cpp) share these.
#include <algorithm>

#include <fmt/format.h>

#include "search/canonical.hpp"
#include "search/coordinator_state.hpp"

namespace kmcts::detail {

using State = Coordinator::State;

// The statistics along the path changed: they reach the store with the next flush (the
// event log, written at once, is what resume and replay rebuild them from). `walked_to_node`:
// the path went on from its last node to `node` along their edge even where they are the same
// node (a child equal to its parent: the self-loop's visits changed too).
void persist_path(State& s, const std::vector<int>& path, int node, bool walked_to_node) {
  for (size_t i = 0; i < path.size(); ++i) {
    s.dirty.node(path[i]);
    if (i > 0) s.dirty.edge(path[i - 1], path[i]);
  }
  if (path.empty() || path.back() != node || walked_to_node) {
    s.dirty.node(node);
    if (!path.empty()) s.dirty.edge(path.back(), node);
  }
}

nlohmann::json spare_plans_json(const std::vector<Plan>& plans) {
  nlohmann::json out = nlohmann::json::array();
  for (const Plan& p : plans) out.push_back({{"text", p.text}, {"prior", p.prior}, {"data", p.data}});
  return out;
}

void queue_shares(std::vector<double>& shares, const Plan& taken, const std::vector<Plan>& spare) {
  double sum = std::max(0.0, taken.prior);
  for (const Plan& p : spare) sum += std::max(0.0, p.prior);
  const double mean = sum / static_cast<double>(spare.size() + 1);
  for (const Plan& p : spare) shares.push_back(mean > 0 ? std::max(0.0, p.prior) / mean : 1.0);
}

std::vector<Plan> spare_plans_from_json(const nlohmann::json& recorded) {
  std::vector<Plan> plans;
  if (!recorded.is_array()) return plans;  // a count: logs written before the plans were recorded
  for (const nlohmann::json& p : recorded)
    plans.push_back({p.value("text", std::string()), p.value("prior", 1.0), p.value("data", nlohmann::json::object())});
  return plans;
}

namespace {

// An evaluation's job, shared by its compile and its measurement; the EvalDone copies the
// selection on the worker's thread.
struct EvalJob {
  Selection selection;
  int node;
  std::shared_ptr<const std::string> source;
};

void push_result(State& s, const EvalJob& job, EvalResult result) {
  s.completions.push(std::make_unique<EvalDone>(EvalDone{job.selection, job.node, std::make_shared<const EvalResult>(std::move(result))}));
}

void push_failed(State& s, const EvalJob& job, const std::exception& e) {
  EvalResult result;
  result.verdict = Verdict::infra_error;
  result.message = fmt::format("evaluator error: {}", e.what());
  push_result(s, job, std::move(result));
}

}  // namespace

// Compile on the compile pool; only a successful build queues for a measurement slot.
void start_evaluation(State& s, Selection sel, int node, std::shared_ptr<const std::string> source, bool count) {
  if (count) s.evaluations_started++;
  if (s.replaying) return;
  auto job = std::make_shared<const EvalJob>(EvalJob{std::move(sel), node, std::move(source)});
  s.compiles.submit([&s, job] {
    try {
      BuildResult built = s.parts.evaluator->build(*job->source);
      if (!built.ok) {
        push_result(s, *job, compile_error_result(built));
        return;
      }
      s.measurements.submit([&s, job, built = std::move(built)] {
        try {
          push_result(s, *job, s.parts.evaluator->measure_built(built));
        } catch (const std::exception& e) {
          push_failed(s, *job, e);
        }
      });
    } catch (const std::exception& e) {
      push_failed(s, *job, e);
    }
  });
}

void prepare_child(AgentDone& done) {
  done.prepared = true;
  if (!done.code.ok) return;
  done.hash = canonical_hash(done.code.source);
  done.meta = std::make_shared<const nlohmann::json>(done.code.meta);
  done.known_key = KnownVariants::key_of(done.code.meta);
  if (done.plan.data.is_object()) done.plan.data["prior"] = done.plan.prior;  // PUCT reads it from the edge
  done.plan_data = std::make_shared<const nlohmann::json>(done.plan.data);
}

namespace {

// The agent call of a trial: its context from the graph as it stands, its rng from the node and
// the node's call count `call`, and the spare plan it took (if any); the outcome is pushed as
// a completion.
void submit_agents(State& s, VariantGraph& g, Selection sel, int call, std::optional<Plan> plan) {
  CounterRng rng(s.settings.seed, mix64(static_cast<uint64_t>(sel.node)) ^ mix64(static_cast<uint64_t>(call) + 1) ^
                                      string_key(sel.kind == Selection::Kind::debug ? "debug" : "expand"));
  if (sel.kind == Selection::Kind::debug) {
    DebugContext ctx{&s.problem, s.view(g, sel.node), {}, g.node(sel.node).debug_attempts - 1, rng};
    const int parent = g.tree_parent(sel.node);  // the node it was made from (itself for the seed)
    ctx.parent = s.view(g, parent >= 0 ? parent : sel.node);
    s.agents.submit([&s, sel = std::move(sel), ctx = std::move(ctx)] {
      auto owned = std::make_unique<AgentDone>();
      AgentDone& done = *owned;
      done.selection = sel;
      try {
        done.code = s.parts.debugger->repair(ctx);
        done.plan.text = done.code.meta.value("plan", fmt::format("repair #{} ({})", sel.node, ctx.failed.result ? to_string(ctx.failed.result->verdict) : "?"));
        prepare_child(done);
      } catch (const std::exception& e) {
        done.error = e.what();
      }
      s.completions.push(std::move(owned));
    });
    return;
  }
  PlanContext ctx{&s.problem, s.view(g, sel.node), {}, {}, std::nullopt, s.settings.plans_per_call, rng, s.planner_memory()};
  g.for_each_child(sel.node, [&](int c, const EdgeRecord& e) {
    NodeView& tried = ctx.tried.emplace_back(s.brief_view(g, c));
    tried.edge_plan = e.plan;
    tried.reached_known = e.transposition;
    tried.unchanged = c == sel.node;
    return true;
  });
  ctx.known = borrow(s.known);
  if (s.best_node >= 0 && s.best_node != sel.node) ctx.best = s.view(g, s.best_node);
  s.agents.submit([&s, sel = std::move(sel), ctx = std::move(ctx), plan = std::move(plan)] {
    auto owned = std::make_unique<AgentDone>();
    AgentDone& done = *owned;
    done.selection = sel;
    auto t0 = std::chrono::steady_clock::now();
    try {
      std::optional<Plan> chosen = plan;
      if (!chosen) {
        PlanResult proposed = s.parts.planner->propose(ctx);
        done.code.usage = proposed.usage;
        if (proposed.plans.empty()) {
          done.exhausted = proposed.exhausted;
          done.error = proposed.error.empty() ? "the planner proposed nothing" : proposed.error;
        } else {
          chosen = proposed.plans.front();
          done.spare_plans.assign(proposed.plans.begin() + 1, proposed.plans.end());
        }
      }
      if (chosen) {
        AgentUsage planning = done.code.usage;
        done.plan = *chosen;
        done.code = s.parts.coder->write(s.problem, ctx.parent, *chosen);
        planning.add(done.code.usage);
        done.code.usage = std::move(planning);
        prepare_child(done);
      }
      done.spare_json = spare_plans_json(done.spare_plans);  // the event's copy, made here: it cost the coordinator 15%
    } catch (const std::exception& e) {
      done.error = e.what();  // (spare_json left null: the coordinator makes it)
    }
    done.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    s.completions.push(std::move(owned));
  });
}

}  // namespace

void start_agents(State& s, VariantGraph& g, Selection sel) {
  sel.trial = ++s.trials;
  s.in_flight++;
  s.agent_stage++;
  s.agent_calls_total++;
  const int call = State::at_node(s.agent_calls, sel.node)++;
  // An expansion takes the node's next spare plan, if a planner call left one, at selection
  // time: a replay (resume) does the same, so the queue it rebuilds is the one the run had.
  std::optional<Plan> plan;
  if (sel.kind == Selection::Kind::expand)
    if (auto& queue = State::at_node(s.queued_plans, sel.node); !queue.empty()) {
      plan = std::move(queue.front()), queue.erase(queue.begin());
      auto& shares = State::at_node(s.queued_shares, sel.node);  // in step with the plans: queued together
      if (!shares.empty()) shares.erase(shares.begin());
      g.node(sel.node).next_plan_share = shares.empty() ? 0.0 : shares.front();
    }
  if (sel.kind == Selection::Kind::debug) s.dirty.node(sel.node);  // its repair count went up
  s.event_lazy("select", [trial = sel.trial, debug = sel.kind == Selection::Kind::debug, node = sel.node, path = sel.path] {
    return nlohmann::json{{"trial", trial}, {"kind", debug ? "debug" : "expand"}, {"node", node}, {"path", path}};
  });
  if (s.replaying) {  // the call is made only if the log ends before its outcome (resume_agents)
    s.open_calls[sel.trial] = State::OpenCall{call, std::move(plan)};
    return;
  }
  submit_agents(s, g, std::move(sel), call, std::move(plan));
}

void resume_agents(State& s, VariantGraph& g, const Selection& sel) {
  auto it = s.open_calls.find(sel.trial);
  if (it == s.open_calls.end()) throw std::logic_error("resume_agents: trial " + std::to_string(sel.trial) + " is not open");
  State::OpenCall open = std::move(it->second);
  s.open_calls.erase(it);
  submit_agents(s, g, sel, open.call, std::move(open.plan));
}

void apply_agent(State& s, VariantGraph& g, AgentDone& d) {
  s.agent_stage--;
  if (!s.open_calls.empty()) s.open_calls.erase(d.selection.trial);  // a replay: the call came back
  const Selection& sel = d.selection;
  s.usage.add_totals(d.code.usage);
  // LLM agents leave their usage and every call's record (attempts, errors) in the event;
  // rule agents make no calls and leave nothing.
  auto with_usage = [&d](nlohmann::json payload) {
    if (d.code.usage.calls > 0 || !d.code.usage.llm_calls.empty()) {
      payload["usage"] = d.code.usage.totals();
      payload["llm_calls"] = d.code.usage.llm_calls;
    }
    return payload;
  };
  // The spare plans go into the event whole (a resume queues them again as they were), then to
  // the node's queue.
  nlohmann::json spare = d.spare_json.is_array() ? std::move(d.spare_json) : spare_plans_json(d.spare_plans);
  auto& queue = State::at_node(s.queued_plans, sel.node);
  queue_shares(State::at_node(s.queued_shares, sel.node), d.plan, d.spare_plans);
  queue.insert(queue.end(), std::make_move_iterator(d.spare_plans.begin()), std::make_move_iterator(d.spare_plans.end()));
  if (!queue.empty()) g.node(sel.node).next_plan_share = State::at_node(s.queued_shares, sel.node).front();
  const char* kind = sel.kind == Selection::Kind::debug ? "debug" : "expand";
  // A call cancelled by a stop (resume cancels the calls a run left open) neither failed nor
  // finished.
  const bool cancelled = d.error.rfind("cancelled:", 0) == 0;
  if (!cancelled) s.agent_calls_done++;
  if (!d.error.empty() || !d.code.ok) {
    std::string why = !d.error.empty() ? d.error : d.code.error;
    if (!d.exhausted && !cancelled && s.agent_failures++ == 0) s.first_agent_failure = fmt::format("{}: {}", kind, why);
    s.event("agent_failed", with_usage({{"trial", sel.trial}, {"node", sel.node}, {"kind", kind}, {"plan", d.plan.text},
                                        {"prior", d.plan.prior}, {"error", why}, {"exhausted", d.exhausted}, {"spare_plans", std::move(spare)}}));
    s.parts.strategy->on_expansion_failed(g, sel, d.exhausted);
    s.in_flight--;
    return;
  }
  if (!d.prepared) prepare_child(d);  // a replay: no agent thread did
  // The JSON fields move into the graph; the views, the event and the store share copies the
  // agent's thread made (d is not read again).
  NodeRecord child{.hash = d.hash, .origin = kind, .meta = std::move(d.code.meta), .plan = d.plan.text, .created_seq = s.seq + 1};
  EdgeRecord edge{.kind = sel.kind == Selection::Kind::debug ? EdgeKind::debug : EdgeKind::expand,
                  .prior = d.plan.data.is_object() ? d.plan.prior : 1.0,  // prior_of_plan_data(d.plan.data): prepare_child put it there
                  .plan = d.plan.text,
                  .plan_data = std::move(d.plan.data),
                  .seq = s.seq + 1};
  VariantGraph::Added added = g.add_child(sel.node, std::move(child), std::move(edge));
  // The store's rows, as they stand now (before the strategy's bookkeeping): their strings and
  // JSON are filled on the writer thread, from the fields the closure below owns or shares.
  NodeRecord node_row = added.new_node ? detail::insert_row(g.node(added.node)) : NodeRecord{.meta = nlohmann::json()};
  EdgeRecord edge_row{.plan_data = nlohmann::json()};
  if (added.new_node) {
    const NodeRecord& n = g.node(added.node);
    s.known->add_key(std::move(d.known_key));
    State::at_node(s.metas, added.node) = d.meta;
    s.link_plan(n, sel.node);
    State::at_node(s.sources, added.node) = std::make_shared<const std::string>(std::move(d.code.source));
  }
  if (added.new_edge) {
    const EdgeRecord& e = *g.edge(sel.node, added.node);
    edge_row = EdgeRecord{.parent = e.parent, .child = e.child, .kind = e.kind, .visits = e.visits, .prior = e.prior,
                          .transposition = e.transposition, .plan_data = nlohmann::json(), .seq = e.seq};
  }
  if (added.new_edge && !added.new_node) s.transpositions++;
  nlohmann::json usage, llm_calls;
  if (d.code.usage.calls > 0 || !d.code.usage.llm_calls.empty())
    usage = d.code.usage.totals(), llm_calls = d.code.usage.llm_calls;
  s.parts.strategy->on_child(g, sel, added.node, added.new_node);
  const int64_t trial = sel.trial;
  const int parent = sel.node;
  if (added.new_node) {
    start_evaluation(s, std::move(d.selection), added.node, s.source_of(added.node));  // sel is not read again
  } else {
    s.in_flight--;
    persist_path(s, sel.path, added.node, true);  // the strategy walked the new edge (path_to(.., always))
  }
  // One write: the new node's source file and row, the new edge's row and the "child" event. The
  // file is the writer's too: a disk that stalls (ext4's journal on a virtual disk did, for
  // seconds) then delays the store, not the agent calls and with them the search. A file that
  // cannot be written is a store error, which stops the run (resumable), as a row would. A
  // replay writes no files: its sources are the recorded run's.
  std::shared_ptr<const std::string> source = added.new_node && !s.replaying ? s.source_of(added.node) : nullptr;
  s.writer.write([seq = s.next_seq(), time = s.elapsed(), trial, parent, added, kind, source = std::move(source), node_row = std::move(node_row),
                  edge_row = std::move(edge_row), hash = std::move(d.hash), meta = std::move(d.meta),
                  plan = std::move(d.plan.text), plan_data = std::move(d.plan_data), prior = d.plan.prior,
                  spare = std::move(spare), seconds = d.seconds, usage = std::move(usage),
                  llm_calls = std::move(llm_calls)](RunStore& st) mutable {
    if (added.new_node) {
      if (source) st.put_source(hash, *source);  // before its row: a stored node's source is on disk
      node_row.hash = hash, node_row.origin = kind, node_row.plan = plan, node_row.meta = *meta;
      st.add_node(node_row);
    }
    if (added.new_edge) {
      edge_row.plan = plan, edge_row.plan_data = *plan_data;
      st.add_edge(edge_row);
    }
    nlohmann::json payload = {{"trial", trial}, {"parent", parent}, {"child", added.node}, {"kind", kind},
                              {"hash", std::move(hash)}, {"meta", *meta}, {"plan", std::move(plan)},
                              {"plan_data", *plan_data}, {"prior", prior}, {"spare_plans", std::move(spare)},
                              {"new_node", added.new_node}, {"new_edge", added.new_edge},
                              {"closes_cycle", added.closes_cycle}, {"agent_seconds", seconds}};
    if (!usage.is_null()) payload["usage"] = std::move(usage), payload["llm_calls"] = std::move(llm_calls);
    st.append_event(EventRecord{seq, time, "child", std::move(payload)});
  });
}

void apply_evaluation(State& s, VariantGraph& g, EvalDone& d) {
  s.in_flight--;
  s.evaluations_done++;
  // Shared by the views and the store write (which copies it into its record on the writer thread).
  std::shared_ptr<const EvalResult> result = std::move(d.result);
  const EvalResult& r = *result;
  NodeRecord& n = g.node(d.node);
  n.status = r.ok() ? NodeStatus::ok : NodeStatus::failed;
  n.verdict = to_string(r.verdict);
  n.speedup = r.ok() ? r.speedup : 0;
  n.median_ns = r.ok() ? r.candidate.median_ns : 0;
  if (r.ok() && (s.best_node < 0 || n.speedup > g.node(s.best_node).speedup)) s.best_node = d.node;
  if (!r.ok()) {
    s.failures++;
    s.failures_by_verdict[n.verdict]++;
  }
  auto& slot = State::at_node(s.results, d.node);
  if (slot) s.retired_results.push_back(std::move(slot));  // views may still borrow it (not seen: a node is measured once)
  slot = result;
  s.parts.strategy->on_evaluated(g, d.selection, d.node, s.parts.reward->of(r));
  // One write: the evaluation, its event, and the node's mutable fields (its measurement now,
  // its visit statistics with the path).
  s.writer.write([seq = s.next_seq(), time = s.elapsed(), trial = d.selection.trial, stats = node_stats(n),
                  result = std::move(result)](RunStore& st) {
    st.add_evaluation(EvaluationRecord{stats.id, seq, *result});
    st.append_event(EventRecord{seq, time, "evaluation",
                                {{"trial", trial}, {"node", stats.id}, {"verdict", stats.verdict}, {"speedup", stats.speedup},
                                 {"reward", stats.reward}, {"message", result->message}}});
    st.update_node(stats);
  });
  persist_path(s, d.selection.path, d.node, false);
}

void add_root(State& s, VariantGraph& g) {
  NodeRecord root;
  root.hash = canonical_hash(s.problem.seed_source);
  root.origin = "seed";
  root.meta = s.problem.seed_meta;
  root.created_seq = s.seq + 1;
  g.add_root(root);
  s.known->add(root.meta);
  State::at_node(s.metas, 0) = std::make_shared<const nlohmann::json>(root.meta);
  State::at_node(s.plan_links, 0) = nullptr;
  State::at_node(s.sources, 0) = std::make_shared<const std::string>(s.problem.seed_source);
  s.store.put_source(root.hash, s.problem.seed_source);
  s.add_node(g.node(0));
  s.event("node", {{"node", 0}, {"origin", "seed"}, {"hash", root.hash}});
  s.in_flight = 1;
  start_evaluation(s, Selection{Selection::Kind::expand, -1, {}, 0}, 0, s.source_of(0));
}

}  // namespace kmcts::detail
