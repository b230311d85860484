#include "search/mcts.hpp"

#include <algorithm>

#include "core/error.hpp"

KMCTS_OPTION("search.branching", Int, 4, 1, 64,
             "Fixed branching limit: children a node gets (expansions in flight count) before "
             "selection descends below it; also the child cap of the baseline strategies.")
KMCTS_OPTION("search.debug_attempts", Int, 2, 0, 16,
             "Repairs the Debugger may try along one lineage of failed variants (0 = no debugging).")
KMCTS_OPTION("search.reroot_depth", Int, 64, 0, 1000000,
             "Re-rooting for deep lineages: once the node about to be expanded, or a new best, lies more than this many "
             "levels below where descents start (or not below it at all), later descents (and the backups of their "
             "jobs) start at its ancestor half as many levels up, and follow the lineage tree below it (each child from "
             "the node it was made from, not transposition edges, which lead across lineages at any depth); the "
             "statistics above stay as they were, and every edge still counts in them. Most descents and backups then "
             "walk about this depth, not the lineage's (thousands deep at 10^5 evaluations; "
             "a descent falls back to the seed when nothing below its start can be selected); the refinement arm "
             "still picks from every measured node. 0 = every descent starts at the seed.")
KMCTS_OPTION("search.reroot_repairs", Bool, true, std::nullopt, std::nullopt,
             "A repair job's path starts as a refinement's does under search.reroot_depth: where descents start, or "
             "half that depth above the failed node. false: where descents start if the failed node lies below it, else "
             "at the seed (a repair deep in a lineage then walks, and backs up along, all of it); runs recorded before "
             "this option replay and resume with false.")
KMCTS_OPTION("search.policy", String, "uct", std::nullopt, std::nullopt,
             "MCTS selection policy: uct, puct (Planner priors), thompson or egreedy.")

namespace kmcts {

MctsStrategy::Parts MctsStrategy::Parts::from_config(const Config& c) {
  Parts p;
  p.policy = SelectionPolicyRegistry::instance().create("selection policy", c.get_string("search.policy"), c);
  p.pending = PendingTreatmentRegistry::instance().create("pending-work treatment", c.get_string("search.pending"), c);
  p.widening = WideningRegistry::instance().create("widening", c.get_string("search.widening"), c);
  p.backup = BackupRegistry::instance().create("backup", c.get_string("search.backup"), c);
  p.value_scale = ValueScaleRegistry::instance().create("value scale", c.get_string("search.value_scale"), c);
  p.expansion = ExpansionRuleRegistry::instance().create("expansion rule", c.get_string("search.expansion"), c);
  p.exploration = ExplorationScheduleRegistry::instance().create("exploration schedule",
                                                                  c.get_string("search.exploration_schedule"), c);
  p.chain = ChainRuleRegistry::instance().create("chain rule", c.get_string("search.chain"), c);
  p.chain_length = static_cast<int>(c.get_int("search.chain_length"));
  p.refinement = RefinementRegistry::instance().create("refinement", c.get_string("search.refine"), c);
  p.reroot_depth = static_cast<int>(c.get_int("search.reroot_depth"));
  p.reroot_repairs = c.get_bool("search.reroot_repairs");
  return p;
}

MctsStrategy::MctsStrategy(CommonStrategySettings settings, Parts parts)
    : LedgerStrategy(settings.debug_attempts, 2 * settings.branching), settings_(settings), parts_(std::move(parts)) {
  ledger_.leave_backup_to_strategy();  // recompute() sets the statistics; back_up() counts the edges
}

bool MctsStrategy::has_capacity(const VariantGraph& graph, int node) const {
  return ledger_.has_capacity(graph, node, parts_.widening->max_children(graph.node(node).visits));
}

// Memo of one next() call, by node: 0 = unknown, 1 = in progress (a cycle back to it counts
// as not selectable), 2 = selectable, 3 = not selectable. Stamped with the call's epoch, so a
// call neither allocates nor clears anything (O(nodes visited), not O(graph)).
MctsStrategy::Memo& MctsStrategy::memo_entry(int node) const {
  if (memo_.size() <= static_cast<size_t>(node)) memo_.resize(static_cast<size_t>(node) + 1 + memo_.size() / 2);
  Memo& m = memo_[static_cast<size_t>(node)];  // stamp and state side by side: one cache line
  if (m.epoch != epoch_) m.epoch = epoch_, m.state = 0, m.on_path = false;
  return m;
}

bool MctsStrategy::search_selectable(const VariantGraph& graph, int node) const {
  // Where a cycle can be reached, the answer depends on the order of this search (a node met
  // again while in progress counts as not selectable), so it is made per descent, as always.
  const int state = memo(node);
  if (state == 1 || state == 3) return false;
  if (state == 2) return true;
  memo(node) = 1;
  bool result = open(graph, node);
  if (!result && enterable(graph, node))
    graph.for_each_child(node, [&](int c, const EdgeRecord&) {
      result = enterable(graph, c) && selectable(graph, c);
      return !result;
    });
  memo(node) = result ? 2 : 3;
  return result;
}

namespace {

/// Sets the kept flag of `node` in `flags` (grown as nodes come); whether it changed.
bool set_flag(std::vector<uint8_t>& flags, int node, bool value) {
  if (flags.size() <= static_cast<size_t>(node)) flags.resize(static_cast<size_t>(node) + 1 + flags.size() / 2, 0);
  if (flags[static_cast<size_t>(node)] == static_cast<uint8_t>(value)) return false;
  flags[static_cast<size_t>(node)] = value;
  return true;
}

bool flag(const std::vector<uint8_t>& flags, int node) {
  return static_cast<size_t>(node) < flags.size() && flags[static_cast<size_t>(node)];
}

}  // namespace

bool MctsStrategy::tree_selectable(const VariantGraph& graph, int node) const {
  if (parts_.keep_selectability) return flag(tree_open_, node);
  if (!enterable(graph, node)) return false;
  bool result = open(graph, node);
  if (!result)
    graph.for_each_child(node, [&](int c, const EdgeRecord&) {
      result = graph.tree_parent(c) == node && tree_selectable(graph, c);
      return !result;
    });
  return result;
}

void MctsStrategy::refresh_tree(const VariantGraph& graph, int node) {
  if (!parts_.keep_selectability) return;
  // Up the tree parents while the flag changes: a node's flag reads only its tree children's.
  for (; node >= 0; node = graph.tree_parent(node)) {
    bool is_open = false;
    if (enterable(graph, node)) {
      is_open = open(graph, node);
      if (!is_open)
        graph.for_each_child(node, [&](int c, const EdgeRecord&) {
          is_open = graph.tree_parent(c) == node && flag(tree_open_, c);
          return !is_open;
        });
    }
    if (!set_flag(tree_open_, node, is_open)) return;
  }
}

void MctsStrategy::refresh_graph(const VariantGraph& graph, int node) {
  if (!parts_.keep_selectability || graph.reaches_cycle(node)) return;
  bool is_open = false;
  if (enterable(graph, node)) {
    is_open = open(graph, node);
    // The children reach no cycle either, so their flags are kept (and 0 unless enterable).
    if (!is_open)
      graph.for_each_child(node, [&](int c, const EdgeRecord&) {
        is_open = flag(selectable_, c);
        return !is_open;
      });
  }
  if (!set_flag(selectable_, node, is_open)) return;
  graph.for_each_parent(node, [&](int p) {
    refresh_graph(graph, p);
    return true;
  });
}

void MctsStrategy::refresh_path(const VariantGraph& graph, const std::vector<int>& path) {
  // A node's flags read its status, its room and its children's flags (refresh() goes on up
  // from a node whose flag changed). Above the last two nodes only the visits changed.
  const size_t last = parts_.widening->reads_visits() ? path.size() : std::min<size_t>(path.size(), 2);
  for (size_t k = 0; k < last; ++k) refresh(graph, path[path.size() - 1 - k]);
}

int MctsStrategy::choose_child(const VariantGraph& graph, int node,
                               const std::vector<std::pair<int, const EdgeRecord*>>& candidates, CounterRng& rng,
                               bool with_virtual) const {
  // Priors come from the Planner through the edge (plan_data.prior), normalised here over
  // the candidates; without priors every candidate gets the same share. The candidates carry
  // their edges: looking each up again would cost O(children) per candidate.
  std::vector<double>& priors = priors_;
  priors.clear();
  double total = 0;
  for (const auto& [c, e] : candidates) {
    double p = e->prior;
    priors.push_back(p > 0 ? p : 0.0);
    total += priors.back();
  }
  std::vector<ChildStats>& stats = stats_;
  stats.clear();
  for (size_t i = 0; i < candidates.size(); ++i) {
    const NodeRecord& child = graph.node(candidates[i].first);
    double q = child.visits > 0 ? child.value_sum / child.visits : 0.0;
    double prior = total > 0 ? priors[i] / total : 1.0 / candidates.size();
    stats.push_back(parts_.pending->child(q, candidates[i].second->visits, ledger_.pending_visits(candidates[i].first), prior));
  }
  if (with_virtual) {
    // Expanding this node, as one more child: its value is the node's own reward (what a new
    // variant of it is expected to bring), one visit, and a sibling's average prior.
    const double share = 1.0 / static_cast<double>(stats.size() + 1);
    for (auto& st : stats) st.prior *= 1 - share;
    const auto [value, visits] = parts_.expansion->generation_arm(graph, node);
    stats.push_back(parts_.pending->child(value, visits, 0, share));
  }
  parts_.value_scale->apply(stats, measured_);
  // argmax(q / w + c e) = argmax(q + c w e): exploration weighs w
  if (const double w = parts_.exploration->weight(selections_); w != 1.0)
    for (ChildStats& st : stats) st.q /= w;
  ParentStats parent = parts_.pending->parent(graph.node(node).visits, ledger_.pending_visits(node));
  const size_t chosen = parts_.policy->choose(parent, stats, rng);
  return chosen < candidates.size() ? candidates[chosen].first : -1;
}

std::optional<Selection> MctsStrategy::next_chain_step(VariantGraph& graph) {
  while (!chain_heads_.empty()) {
    auto [path, step] = std::move(chain_heads_.front());
    chain_heads_.pop_front();
    const int node = path.back();
    if (graph.node(node).status != NodeStatus::ok || !has_capacity(graph, node)) continue;
    chain_step_of_[node] = step;
    ++selections_;
    Selection selection = ledger_.start_expand(std::move(path));
    refresh(graph, selection.node);
    return selection;
  }
  return std::nullopt;
}

std::optional<Selection> MctsStrategy::next(VariantGraph& graph) {
  // A repair's path starts where a refinement's would (start_for): from the root, a failed
  // variant of a lineage thousands of levels deep made a path, and a backup, that long.
  if (const int failed = ledger_.next_debug(); failed >= 0)
    return ledger_.start_debug(graph, parts_.reroot_repairs ? start_for(graph, failed) : search_root_);
  if (auto step = next_chain_step(graph)) return step;
  if (graph.size() == 0) return std::nullopt;
  // Keyed by the count of selections handed out, so a descent that finds nothing (possible
  // only through a cycle) leaves no trace: a replay calls next() only where a job was started.
  CounterRng rng = job_rng(settings_.seed, "mcts", selections_ + 1);
  if (refinement().active())
    if (auto refinement = next_refinement(graph, rng)) return refinement;
  std::vector<int> path;  // a few dozen nodes at most: a linear search beats a set
  path.reserve(32);       // one allocation for most descents
  // Nodes where a descent of this call came to nothing: their only open children lay on its
  // path (a cycle). They count as not selectable for the rest of the call, and the descent
  // starts again from the root. Each such node reaches a cycle, so its memo is what is read.
  std::vector<int> dead_ends;
  auto on_path = [this](int n) { return memo_entry(n).on_path; };  // O(1): stamped as the path grows
  int top = search_root_;  // the seed, or where re-rooting moved the descents (search.reroot_depth)
  for (bool found = false; !found;) {
    ++epoch_;
    for (int d : dead_ends) memo(d) = 3;
    // Below a re-rooted start a descent follows the lineage tree (each child from the node it
    // was made from): transpositions lead across lineages at any depth, and a descent that
    // followed them walked hundreds of closed nodes. The tree has no cycle to search for.
    const bool tree_only = top != 0;
    if (!(tree_only ? tree_selectable(graph, top) : selectable(graph, top))) {
      if (top == 0) return std::nullopt;
      top = 0;  // nothing left to select below it: the whole tree again
      continue;
    }
    path.clear();
    int node = top;
    while (true) {
      graph.prefetch_children(node);  // read below (candidates, then their statistics)
      path.push_back(node);
      memo_entry(node).on_path = true;
      const bool here = open(graph, node);
      if (here && !parts_.expansion->competes()) {
        found = true;
        break;
      }
      auto& candidates = candidates_;  // in edge order
      candidates.clear();
      // A child on the path would close a cycle through this node: below a node that reaches
      // none, no child is on the path, and the O(depth) search for one is skipped.
      const bool may_cycle = !tree_only && graph.reaches_cycle(node);
      graph.for_each_child(node, [&](int c, const EdgeRecord& e) {
        if (tree_only ? graph.tree_parent(c) == node && tree_selectable(graph, c)
                      : !(may_cycle && on_path(c)) && enterable(graph, c) && selectable(graph, c))
          candidates.emplace_back(c, &e);
        return true;
      });
      if (candidates.empty()) {
        found = here;
        if (here) break;
        if (tree_only) top = 0;  // (never, while the tree's flags hold): the whole graph again
        else dead_ends.push_back(node);  // only reachable through a cycle
        break;
      }
      // A rule that decides itself whether to expand here (search.expansion=thompson).
      const std::optional<bool> generate = here ? parts_.expansion->generate(graph, node, measured_, rng) : std::nullopt;
      if (generate == true) {
        found = true;
        break;
      }
      const int chosen = choose_child(graph, node, candidates, rng, here && !generate.has_value());
      if (chosen < 0) {  // expanding here won over every child
        found = true;
        break;
      }
      node = chosen;
    }
  }
  ++selections_;
  search_root_ = start_for(graph, path.back());
  Selection selection = ledger_.start_expand(std::move(path));
  refresh(graph, selection.node);  // one more expansion in flight there
  if (refinement().active()) arm_of_.emplace(selection.node, Refinement::descend);
  return selection;
}

std::optional<Selection> MctsStrategy::next_refinement(VariantGraph& graph, CounterRng& rng) {
  if (refinement().choose(rng) != Refinement::refine) return std::nullopt;
  while (!incumbents_.empty()) {
    const int node = -incumbents_.top().second;
    if (has_capacity(graph, node)) {
      ++selections_;
      // Its path starts where the descents start when it lies near below that, else half the
      // limit above it; the descents stay where they are (an old incumbent may lie high above
      // a lineage that went on thousands of levels: starting them there walked all of it).
      Selection selection = ledger_.start_expand(graph.tree_path(node, start_for(graph, node)));
      refresh(graph, selection.node);
      arm_of_.emplace(node, Refinement::refine);
      return selection;
    }
    // Room comes back only when an expansion in flight ends without a child: keep such a node.
    if (ledger_.pending_expansions(node) > 0) return std::nullopt;
    incumbents_.pop();
  }
  return std::nullopt;
}

void MctsStrategy::note_outcome(const VariantGraph& graph, const Selection& s, int node, std::optional<double> reward) {
  if (refinement().active() && s.kind == Selection::Kind::expand && s.node >= 0)
    if (auto at = arm_of_.find(s.node); at != arm_of_.end()) {
      refinement().update(at->second, reward && (!best_reward_ || *reward > *best_reward_));
      arm_of_.erase(at);
    }
  if (reward && graph.node(node).status == NodeStatus::ok) {
    if (refinement().active()) incumbents_.emplace(*reward, -node);  // ties: the older node first
    if (!best_reward_ || *reward > *best_reward_) {
      best_reward_ = *reward;
      search_root_ = start_for(graph, node);
    }
  }
}

int MctsStrategy::start_for(const VariantGraph& graph, int node) const {
  const int limit = parts_.reroot_depth;
  if (limit <= 0) return search_root_;
  const int depth = graph.node(node).depth, below = depth - graph.node(search_root_).depth;
  if (below >= 0 && below <= limit) {  // near enough below the descents' start, if below it at all
    int up = node;
    for (int k = 0; k < below; ++k) up = graph.tree_parent(up);
    if (up == search_root_) return search_root_;
  }
  if (depth <= limit / 2) return 0;  // a shallow node elsewhere: the seed
  int up = node;  // its ancestor half the limit up
  for (int k = 0; k < limit / 2; ++k) up = graph.tree_parent(up);
  return up;
}

void MctsStrategy::recompute(VariantGraph& graph, const std::vector<int>& path) const { recompute(graph, path, false); }

void MctsStrategy::back_up(VariantGraph& graph, const std::vector<int>& path, std::optional<double> sample) const {
  if (!sample) return recompute(graph, path, false);
  // The mean backup adds the sample to every node on the path and counts the edges walked;
  // recompute() then sets each node from its children, leaf first. Before it reaches a node,
  // a node further down may read it as a child (a back edge: both lie on a cycle), so the
  // sums are still added where a node reaches a cycle (or is pending, left alone below), and
  // the edges are counted as recompute() reads them. A node twice on the path (the job
  // closed a cycle) would read its own edge before its second walk is counted: that path
  // takes the backup as it was.
  if (std::find(path.begin(), path.end() - 1, path.back()) != path.end() - 1) {
    backup_mean(graph, path, *sample);
    return recompute(graph, path, false);
  }
  for (int id : path)
    if (NodeRecord& n = graph.node(id); graph.reaches_cycle(id) || n.status == NodeStatus::pending) n.visits++, n.value_sum += *sample;
  recompute(graph, path, true);
}

void MctsStrategy::recompute(VariantGraph& graph, const std::vector<int>& path, bool count_walk_too) const {
  for (int id : path) graph.prefetch_edges(id);
  if (!path.empty()) graph.prefetch_children(path.back());
  for (size_t i = path.size(); i-- > 0;) {
    if (i > 0) graph.prefetch_children(path[i - 1]);  // read next, while this node's children load
    const int next = count_walk_too && i + 1 < path.size() ? path[i + 1] : -1;  // the edge walked out of it
    NodeRecord& n = graph.node(path[i]);
    if (n.status == NodeStatus::pending) {
      if (EdgeRecord* e = next >= 0 ? graph.edge(path[i], next) : nullptr) e->visits++;
      continue;
    }
    std::vector<WeightedValue>& children = children_;
    children.clear();
    int visits = 1;  // its own evaluation
    graph.for_each_child(path[i], [&](int c, EdgeRecord& e) {
      if (c == next) e.visits++;  // counted as it is read: the same as counting every edge first
      const NodeRecord& child = graph.node(c);
      if (e.visits == 0 || child.status == NodeStatus::pending || child.visits == 0) return true;
      children.push_back({child.value_sum / child.visits, static_cast<double>(e.visits)});
      visits += e.visits;
      return true;
    });
    n.visits = visits;
    n.value_sum = parts_.backup->value(n.reward, children) * visits;
  }
}

void MctsStrategy::on_expansion_failed(VariantGraph& graph, const Selection& s, bool exhausted) {
  LedgerStrategy::on_expansion_failed(graph, s, exhausted);
  if (auto at = arm_of_.find(s.node); refinement().active() && at != arm_of_.end()) arm_of_.erase(at);  // no child: no outcome
  refresh(graph, s.node);  // its expansion is over (and it may be closed now)
}

void MctsStrategy::on_child(VariantGraph& graph, const Selection& s, int child, bool awaiting_evaluation) {
  ledger_.child(graph, s, child, awaiting_evaluation);
  if (awaiting_evaluation) {
    refresh(graph, child);   // pending: not selectable
    refresh(graph, s.node);  // a new child, its expansion over
    return;
  }
  note_outcome(graph, s, child, std::nullopt);  // a variant already in the graph: nothing new
  const auto& path = ledger_.path_to(s, child, true);
  // A known reward is one more sample along the path; a pending child has none yet.
  const NodeRecord& c = graph.node(child);
  back_up(graph, path, c.status != NodeStatus::pending ? std::optional<double>(c.reward) : std::nullopt);
  refresh_path(graph, path);  // visits changed along it (progressive widening reads them)
}

void MctsStrategy::on_evaluated(VariantGraph& graph, const Selection& s, int node, double reward) {
  ledger_.evaluated(graph, s, node, reward);  // sets the reward
  measured_.add(reward);
  const std::optional<double> best_before = best_reward_;
  note_outcome(graph, s, node, reward);
  const auto& path = ledger_.path_to(s, node);
  if (parts_.chain_length > 0 && s.kind == Selection::Kind::expand && s.node >= 0 && s.node != node &&
      graph.node(node).status == NodeStatus::ok && parts_.chain->continues(graph.node(s.node).reward, reward, best_before)) {
    const auto at = chain_step_of_.find(s.node);  // the chain this expansion was a step of
    const int step = (at == chain_step_of_.end() ? 0 : at->second) + 1;
    if (step <= parts_.chain_length) chain_heads_.emplace_back(path, step);
  }
  back_up(graph, path, reward);
  refresh_path(graph, path);
}

}  // namespace kmcts

namespace {
using kmcts::Config;
KMCTS_REGISTER(kmcts::StrategyRegistry, "mcts", [](const Config& c) -> std::unique_ptr<kmcts::Strategy> {
  return std::make_unique<kmcts::MctsStrategy>(kmcts::CommonStrategySettings::from_config(c),
                                               kmcts::MctsStrategy::Parts::from_config(c));
})
}  // namespace
