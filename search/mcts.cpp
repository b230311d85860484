#include "search/mcts.hpp"

#include <limits>

KMCTS_OPTION("search.branching", Int, 4, 1, 64,
             "Fixed branching limit: children a node gets (expansions in flight count) before "
             "selection descends below it.")
KMCTS_OPTION("search.debug_attempts", Int, 2, 0, 16,
             "Repairs the Debugger may try along one lineage of failed variants (0 = no debugging).")
KMCTS_OPTION("search.policy", String, "uct", std::nullopt, std::nullopt, "Selection policy by name (uct).")

namespace kmcts {

MctsStrategy::MctsStrategy(Settings settings, std::unique_ptr<Policy> policy)
    : settings_(settings), policy_(std::move(policy)) {}

int MctsStrategy::count(const std::map<int, int>& m, int key) const {
  auto it = m.find(key);
  return it == m.end() ? 0 : it->second;
}

bool MctsStrategy::has_capacity(const VariantGraph& graph, int node) const {
  if (closed_.count(node)) return false;
  int expanded = 0;
  for (int c : graph.children(node))
    if (graph.edge(node, c)->kind == EdgeKind::expand) ++expanded;
  return expanded + count(pending_expansions_, node) < settings_.branching;
}

// memo: 0 = unknown, 1 = in progress (a cycle back to it counts as not selectable),
// 2 = selectable, 3 = not selectable.
bool MctsStrategy::selectable(const VariantGraph& graph, int node, std::map<int, int>& memo) const {
  int& state = memo[node];
  if (state == 1 || state == 3) return false;
  if (state == 2) return true;
  state = 1;
  bool result = graph.node(node).status == NodeStatus::ok && has_capacity(graph, node);
  for (int c : graph.children(node)) {
    if (result) break;
    result = graph.node(c).status == NodeStatus::ok && selectable(graph, c, memo);
  }
  memo[node] = result ? 2 : 3;
  return result;
}

std::optional<Selection> MctsStrategy::next(VariantGraph& graph) {
  Selection s;
  if (!debug_queue_.empty()) {
    s.kind = Selection::Kind::debug;
    s.node = debug_queue_.front();
    debug_queue_.pop_front();
    s.path = paths_.at(s.node);
    graph.node(s.node).debug_attempts++;
  } else {
    std::map<int, int> memo;
    if (graph.size() == 0 || !selectable(graph, 0, memo)) return std::nullopt;
    int node = 0;
    std::set<int> on_path;
    while (true) {
      s.path.push_back(node);
      on_path.insert(node);
      if (has_capacity(graph, node)) break;
      ParentStats parent{graph.node(node).visits, count(pending_visits_, node)};
      int best = -1;
      double best_score = -std::numeric_limits<double>::infinity();
      for (int c : graph.children(node)) {  // ascending ids: ties go to the oldest child
        if (on_path.count(c) || graph.node(c).status != NodeStatus::ok || !selectable(graph, c, memo)) continue;
        const NodeRecord& child = graph.node(c);
        double score = policy_->score(parent, ChildStats{child.value_sum, child.visits, count(pending_visits_, c), 1.0});
        if (best == -1 || score > best_score) best = c, best_score = score;
      }
      if (best == -1) return std::nullopt;  // only reachable through a cycle
      node = best;
    }
    s.node = node;
    pending_expansions_[node]++;
    expansion_attempts_[node]++;
  }
  for (int n : s.path) pending_visits_[n]++;
  return s;
}

void MctsStrategy::release(const Selection& s) {
  for (int n : s.path)
    if (--pending_visits_[n] == 0) pending_visits_.erase(n);
}

void MctsStrategy::on_expansion_failed(VariantGraph&, const Selection& s, bool exhausted) {
  if (s.kind == Selection::Kind::expand) {
    pending_expansions_[s.node]--;
    if (exhausted || expansion_attempts_[s.node] >= settings_.max_expansion_attempts) closed_.insert(s.node);
  }
  release(s);
}

void MctsStrategy::on_child(VariantGraph& graph, const Selection& s, int child, bool awaiting_evaluation) {
  if (s.kind == Selection::Kind::expand) {
    pending_expansions_[s.node]--;
    if (expansion_attempts_[s.node] >= settings_.max_expansion_attempts) closed_.insert(s.node);
  }
  if (!paths_.count(child)) {
    auto path = s.path;
    path.push_back(child);
    paths_[child] = std::move(path);
  }
  if (s.kind == Selection::Kind::debug) {
    NodeRecord& c = graph.node(child);
    c.debug_attempts = std::max(c.debug_attempts, graph.node(s.node).debug_attempts);
  }
  if (awaiting_evaluation) {
    pending_visits_[child]++;  // the trial now runs through the child too
    return;
  }
  // A transposition: the child's known reward is one more sample along this path.
  const NodeRecord& existing = graph.node(child);
  auto path = s.path;
  path.push_back(child);
  if (existing.status != NodeStatus::pending) backup(graph, path, existing.reward);
  release(s);
}

void MctsStrategy::on_evaluated(VariantGraph& graph, const Selection& s, int node, double reward) {
  auto path = s.path;
  if (path.empty() || path.back() != node) path.push_back(node);
  if (!paths_.count(node)) paths_[node] = path;
  graph.node(node).reward = reward;
  backup(graph, path, reward);
  if (!s.path.empty()) {
    release(s);
    if (--pending_visits_[node] == 0) pending_visits_.erase(node);
  }
  const NodeRecord& n = graph.node(node);
  if (n.status == NodeStatus::failed && n.debug_attempts < settings_.max_debug_attempts) debug_queue_.push_back(node);
}

void MctsStrategy::backup(VariantGraph& graph, const std::vector<int>& path, double reward) {
  for (size_t i = 0; i < path.size(); ++i) {
    NodeRecord& n = graph.node(path[i]);
    n.visits++;
    n.value_sum += reward;
    if (i > 0)
      if (EdgeRecord* e = graph.edge(path[i - 1], path[i])) e->visits++;
  }
}

}  // namespace kmcts

namespace {
using kmcts::Config;
KMCTS_REGISTER(kmcts::StrategyRegistry, "mcts", [](const Config& c) -> std::unique_ptr<kmcts::Strategy> {
  kmcts::MctsStrategy::Settings settings;
  settings.branching = static_cast<int>(c.get_int("search.branching"));
  settings.max_debug_attempts = static_cast<int>(c.get_int("search.debug_attempts"));
  settings.max_expansion_attempts = 2 * settings.branching;
  return std::make_unique<kmcts::MctsStrategy>(
      settings, kmcts::PolicyRegistry::instance().create("selection policy", c.get_string("search.policy"), c));
})
}  // namespace
