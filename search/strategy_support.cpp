#include "search/strategy_support.hpp"

#include <algorithm>

namespace kmcts {

CommonStrategySettings CommonStrategySettings::from_config(const Config& c) {
  CommonStrategySettings s;
  s.seed = static_cast<uint64_t>(c.get_int("search.seed"));
  s.branching = static_cast<int>(c.get_int("search.branching"));
  s.debug_attempts = static_cast<int>(c.get_int("search.debug_attempts"));
  return s;
}

JobLedger::JobLedger(int max_debug_attempts, int max_expansion_attempts)
    : max_debug_attempts_(max_debug_attempts), max_expansion_attempts_(max_expansion_attempts) {}

bool JobLedger::has_capacity(const VariantGraph& graph, int node, int cap) const {
  if (closed(node)) return false;
  return expand_children(graph, node) + pending_expansions(node) < cap;
}

void JobLedger::start(const Selection& s) {
  jobs_in_flight_++;
  for (int n : s.path) pending_visits_.at(n)++;
}

void JobLedger::finish(const Selection& s) {
  jobs_in_flight_--;
  for (int n : s.path) pending_visits_.at(n)--;
}

std::optional<Selection> JobLedger::start_debug(VariantGraph& graph, int top) {
  if (debug_queue_.empty()) return std::nullopt;
  Selection s;
  s.kind = Selection::Kind::debug;
  s.node = debug_queue_.front();
  debug_queue_.pop_front();
  s.path = graph.tree_path(s.node, top);  // top (or root) .. node along first parents (no per-node copy kept)
  graph.node(s.node).debug_attempts++;
  start(s);
  return s;
}

Selection JobLedger::start_expand(std::vector<int> path) {
  Selection s;
  s.node = path.back();
  s.path = std::move(path);
  pending_expansions_.at(s.node)++;
  expansion_attempts_.at(s.node)++;
  start(s);
  return s;
}

void JobLedger::note_attempt_over(const Selection& s, bool exhausted) {
  if (s.kind != Selection::Kind::expand) return;
  pending_expansions_.at(s.node)--;
  if (exhausted || expansion_attempts_.get(s.node) >= max_expansion_attempts_) closed_.at(s.node) = 1;
}

const std::vector<int>& JobLedger::path_to(const Selection& s, int node, bool always) {
  path_.assign(s.path.begin(), s.path.end());
  if (always || path_.empty() || path_.back() != node) path_.push_back(node);
  return path_;
}

void JobLedger::expansion_failed(const Selection& s, bool exhausted) {
  note_attempt_over(s, exhausted);
  finish(s);
}

void JobLedger::child(VariantGraph& graph, const Selection& s, int child, bool awaiting_evaluation) {
  note_attempt_over(s, false);
  if (s.kind == Selection::Kind::debug) {
    NodeRecord& c = graph.node(child);
    c.debug_attempts = std::max(c.debug_attempts, graph.node(s.node).debug_attempts);
  }
  if (awaiting_evaluation) {
    pending_visits_.at(child)++;  // the job now runs through the child too
    return;
  }
  // A transposition: the child's known reward is one more sample along this path.
  const NodeRecord& existing = graph.node(child);
  if (backs_up_ && existing.status != NodeStatus::pending) backup_mean(graph, path_to(s, child, true), existing.reward);
  finish(s);
}

void JobLedger::evaluated(VariantGraph& graph, const Selection& s, int node, double reward) {
  graph.node(node).reward = reward;
  if (backs_up_) backup_mean(graph, path_to(s, node), reward);
  if (!s.path.empty()) {  // the root's evaluation is no job of ours
    finish(s);
    pending_visits_.at(node)--;
  }
  const NodeRecord& n = graph.node(node);
  if (n.status == NodeStatus::failed && n.debug_attempts < max_debug_attempts_) debug_queue_.push_back(node);
}

void LedgerStrategy::on_expansion_failed(VariantGraph&, const Selection& s, bool exhausted) {
  ledger_.expansion_failed(s, exhausted);
}

void LedgerStrategy::on_child(VariantGraph& graph, const Selection& s, int child, bool awaiting_evaluation) {
  ledger_.child(graph, s, child, awaiting_evaluation);
}

void LedgerStrategy::on_evaluated(VariantGraph& graph, const Selection& s, int node, double reward) {
  ledger_.evaluated(graph, s, node, reward);
}

void backup_mean(VariantGraph& graph, const std::vector<int>& path, double reward) {
  for (int id : path) {
    NodeRecord& n = graph.node(id);
    n.visits++;
    n.value_sum += reward;
  }
  count_walk(graph, path);
}

void count_walk(VariantGraph& graph, const std::vector<int>& path) {
  for (size_t i = 1; i < path.size(); ++i)
    if (EdgeRecord* e = graph.edge(path[i - 1], path[i])) e->visits++;
}

int expand_children(const VariantGraph& graph, int node) { return graph.expand_children(node); }

bool faster(const VariantGraph& graph, int a, int b) {
  double sa = graph.node(a).speedup, sb = graph.node(b).speedup;
  return sa > sb || (sa == sb && a < b);
}

int fastest(const VariantGraph& graph, const std::vector<int>& candidates) {
  int best = -1;
  for (int c : candidates)
    if (best == -1 || faster(graph, c, best)) best = c;
  return best;
}

CounterRng job_rng(uint64_t seed, std::string_view strategy, uint64_t job) {
  return CounterRng(seed, string_key(strategy) ^ mix64(job + 1));
}

}  // namespace kmcts
