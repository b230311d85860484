// MCTS driven by hand with several jobs in flight, transpositions and failures, for every
// combination of parts: pending counts return to zero at quiescence, and every evaluated
// node satisfies N(node) = 1 + sum of the visits of its edges.
#include <doctest/doctest.h>

#include <string>

#include <fmt/format.h>

#include "core/draws.hpp"
#include "core/error.hpp"
#include "search/canonical.hpp"
#include "search/mcts.hpp"
#include "search/refine_bandit.hpp"

using namespace kmcts;

namespace {

// A tiny deterministic "world": children of node n proposed at step k land on one of 30
// sources, so transpositions (and edges back to ancestors) happen often; 1 in 6 fails.
// With more sources, transpositions are rare and every 10th child re-derives an ancestor.
struct World {
  int sources = 30;
  std::string source_for(const VariantGraph& g, int node, int step) const {
    if (sources > 30 && step % 10 == 0) {
      auto path = g.tree_path(node);
      return g.node(path[path.size() * 3 / 4]).plan;
    }
    return "src" + std::to_string((node * 7 + step * 3) % sources);
  }
  double reward_of(const std::string& hash) const { return static_cast<double>(hash[0] % 13) / 6.0 - 1.0; }
  bool fails(const std::string& hash) const { return hash[1] % 6 == 0; }
};

void evaluate(VariantGraph& g, MctsStrategy& m, const Selection& s, int node, const World& w) {
  NodeRecord& n = g.node(node);
  n.status = w.fails(n.hash) ? NodeStatus::failed : NodeStatus::ok;
  m.on_evaluated(g, s, node, n.status == NodeStatus::ok ? w.reward_of(n.hash) : -1.0);
}

void check_invariants(const VariantGraph& g, const MctsStrategy& m) {
  CHECK(m.ledger().jobs_in_flight() == 0);
  for (int n = 0; n < g.size(); ++n) {
    CAPTURE(n);
    CHECK(m.ledger().pending_visits(n) == 0);
    CHECK(m.ledger().pending_expansions(n) == 0);
    if (g.node(n).status == NodeStatus::pending) continue;
    int edge_visits = 0;
    for (int c : g.children(n)) edge_visits += g.edge(n, c)->visits;
    CHECK(g.node(n).visits == 1 + edge_visits);
  }
}

// Repairs longer than search.reroot_depth allows, made with search.reroot_repairs=false (the
// rule of runs recorded before the option: from the root when the failed node is not below
// where descents start), over every drive().
int old_rule_long_repairs = 0;

// Drives a search of 40 waves of up to 3 jobs; returns every selection's node and path.
// Every 7th agent call fails (every 14th: the node is exhausted).
std::vector<std::vector<int>> drive(const char* policy, const char* pending, const char* backup, const char* widening,
                                    bool keep_selectability = true, int sources = 30, int chain_length = 0,
                                    const char* expansion = "first_open", const char* refine = "off",
                                    int reroot_depth = 0, const char* value_scale = nullptr, bool reroot_repairs = true) {
  Config c;
  c.set_value("search.reroot_repairs", reroot_repairs, "test");
  if (value_scale) c.set(std::string("search.value_scale=") + value_scale);
  c.set_value("search.reroot_depth", reroot_depth, "test");
  c.set(std::string("search.refine=") + refine);
  c.set_value("search.chain_length", chain_length, "test");
  c.set(std::string("search.expansion=") + expansion);
  c.set(std::string("search.policy=") + policy);
  c.set(std::string("search.pending=") + pending);
  c.set(std::string("search.backup=") + backup);
  c.set(std::string("search.widening=") + widening);
  c.set("search.branching=3");
  auto parts = MctsStrategy::Parts::from_config(c);
  parts.keep_selectability = keep_selectability;
  MctsStrategy m(CommonStrategySettings::from_config(c), std::move(parts));
  World w{sources};
  VariantGraph g;
  std::vector<std::vector<int>> selections;
  int rerooted = 0;  // selections whose path starts below the seed
  int deep_repairs = 0;  // repairs of nodes deeper than the limit
  int long_repairs = 0;  // repairs whose path is longer than the limit (search.reroot_repairs=false only)
  NodeRecord root;
  root.plan = "seed";
  root.hash = canonical_hash(root.plan);
  g.add_root(root);
  evaluate(g, m, Selection{Selection::Kind::expand, -1, {}, 0}, 0, w);
  int step = 0;
  for (int wave = 0; wave < 40; ++wave) {
    std::vector<Selection> jobs;
    while (jobs.size() < 3)
      if (auto s = m.next(g)) {
        jobs.push_back(*s);
        // Below a re-rooted start, a selection's path follows the lineage tree.
        if (s->path.front() != 0)
          for (size_t k = 1; k < s->path.size(); ++k) CHECK(g.tree_parent(s->path[k]) == s->path[k - 1]);
        rerooted += s->path.front() != 0;
        // A repair's path starts as a refinement's does: within the limit above the failed node
        // (from the root, a failed variant deep in a lineage made a path, and a backup, that long).
        if (reroot_depth > 0 && s->kind == Selection::Kind::debug) {
          if (reroot_repairs) CHECK(s->path.size() <= static_cast<size_t>(reroot_depth) + 1);
          deep_repairs += g.node(s->node).depth > reroot_depth;
          long_repairs += s->path.size() > static_cast<size_t>(reroot_depth) + 1;
        }
        selections.push_back(s->path);
        selections.back().push_back(s->kind == Selection::Kind::debug ? -1 : s->node);
      } else {
        break;
      }
    if (jobs.empty()) break;
    for (auto it = jobs.rbegin(); it != jobs.rend(); ++it) {  // resolved out of request order
      if (++step % 7 == 0) {
        m.on_expansion_failed(g, *it, step % 14 == 0);
        continue;
      }
      NodeRecord child;
      child.plan = w.source_for(g, it->node, step);  // (the plan field holds the source's name)
      child.hash = canonical_hash(child.plan);
      EdgeRecord edge;
      edge.kind = it->kind == Selection::Kind::debug ? EdgeKind::debug : EdgeKind::expand;
      auto added = g.add_child(it->node, child, edge);
      bool fresh = added.new_node;
      m.on_child(g, *it, added.node, fresh);
      if (fresh) evaluate(g, m, *it, added.node, w);
    }
  }
  CHECK(g.size() > 5);
  check_invariants(g, m);
  int cyclic = 0;
  for (int n = 0; n < g.size(); ++n) cyclic += g.reaches_cycle(n);
  CHECK(cyclic > 0);  // the world re-derives ancestors: the per-descent search is exercised too
  if (sources > 100) CHECK(cyclic < g.size() / 2);  // and with many sources, the kept flags
  if (reroot_depth == 0) CHECK(rerooted == 0);
  if (reroot_depth > 0) CHECK(rerooted > 0);
  if (reroot_depth > 0) CHECK(deep_repairs > 0);
  if (reroot_repairs) CHECK(long_repairs == 0);
  old_rule_long_repairs += long_repairs;
  return selections;
}

// The MCTS the hand-driven cases below reason about: the classic descent (first_open, values as
// backed up, constant exploration c = 0.2, no refinement bandit), whatever the defaults are;
// each case sets the parts it is about on top.
Config classic() {
  Config c;
  c.set("search.expansion=first_open");
  c.set("search.value_scale=none");
  c.set("search.exploration=0.2");
  c.set("search.anneal_selections=0");
  c.set("search.refine=off");
  return c;
}

// MCTS driven by hand from a root of reward 0: expand() asks for the next job, adds a child
// with `hash` under the selected node (a known hash is a transposition) and evaluates a new
// child with `reward`. Returns (selected node, child).
struct HandDriven {
  explicit HandDriven(const Config& c)
      : m(CommonStrategySettings::from_config(c), MctsStrategy::Parts::from_config(c)) {
    NodeRecord root;
    root.hash = canonical_hash("root");  // (not = "r": GCC 12 -O3 warns falsely, -Wrestrict)
    g.add_root(root);
    g.node(0).status = NodeStatus::ok;
    m.on_evaluated(g, Selection{Selection::Kind::expand, -1, {}, 0}, 0, 0.0);
  }
  std::pair<int, int> expand(const std::string& hash, double reward, NodeStatus status = NodeStatus::ok) {
    Selection s = *m.next(g);
    return {s.node, add(s, hash, reward, status)};
  }
  // The job `s` brings a child with `hash` (a repair for a debug job); a new one is evaluated.
  int add(const Selection& s, const std::string& hash, double reward, NodeStatus status = NodeStatus::ok) {
    NodeRecord n;
    n.hash = hash;
    EdgeRecord e;
    e.kind = s.kind == Selection::Kind::debug ? EdgeKind::debug : EdgeKind::expand;
    auto added = g.add_child(s.node, n, e);
    m.on_child(g, s, added.node, added.new_node);
    if (added.new_node) {
      g.node(added.node).status = status;
      m.on_evaluated(g, s, added.node, reward);
    }
    return added.node;
  }
  MctsStrategy m;
  VariantGraph g;
};

}  // namespace

TEST_CASE("mcts invariants hold for every combination of parts") {
  for (const char* policy : {"uct", "puct", "thompson", "egreedy"})
    for (const char* pending : {"wu_uct", "virtual_loss", "none"})
      for (const char* backup : {"mean", "max", "power_mean"})
        for (const char* widening : {"fixed", "progressive"})
          for (int variant : {0, 1, 2, 3, 4, 5, 6, 7}) {  // as is; chains of 3; adaptive expansion; the
            // refinement bandit; the bandit with descents re-rooted 2 levels deep; expansion by comparison
            // with the tree-wide value scale; the shipped expansion, value scale, annealing and bandit
            // (compare, siblings, 300 selections, bandit) with re-rooting 3 levels deep (this drive's
            // tree never gets 64 deep, the default); AB-MCTS's Thompson expansion with the bandit
            const int chain_length = variant == 1 ? 3 : 0;
            const char* expansion = variant == 2 ? "adaptive" : variant == 7 ? "thompson" : variant >= 5 ? "compare" : "first_open";
            const char* refine = variant == 3 || variant == 4 || variant >= 6 ? "bandit" : "off";
            const int reroot_depth = variant == 4 ? 2 : variant == 6 ? 3 : 0;
            const char* value_scale = variant == 5 ? "tree" : nullptr;  // else the default, siblings
            CAPTURE(policy);
            CAPTURE(pending);
            CAPTURE(backup);
            CAPTURE(widening);
            CAPTURE(chain_length);
            CAPTURE(expansion);
            CAPTURE(refine);
            CAPTURE(reroot_depth);
            CAPTURE(variant);
            // variant 6: repairs by the rule of runs recorded before search.reroot_repairs
            drive(policy, pending, backup, widening, true, 30, chain_length, expansion, refine, reroot_depth, value_scale, variant != 6);
          }
  CHECK(old_rule_long_repairs > 0);  // the old rule is what the option turns back on
}

TEST_CASE("mcts: the kept selectability flags select exactly what a search per descent selects") {
  for (const char* policy : {"uct", "thompson"})
    for (const char* widening : {"fixed", "progressive"})
      for (const char* pending : {"wu_uct", "none"}) {
        CAPTURE(std::string(policy));
        CAPTURE(std::string(widening));
        CAPTURE(std::string(pending));
        for (int sources : {30, 400})
          for (int reroot_depth : {0, 2})  // 2: the lineage tree's flags below re-rooted starts too
            for (const char* refine : {"off", "bandit"}) {  // bandit: refinements beside re-rooted descents
              CAPTURE(sources);
              CAPTURE(reroot_depth);
              CAPTURE(std::string(refine));
              auto kept = drive(policy, pending, "mean", widening, true, sources, 0, "first_open", refine, reroot_depth);
              auto scratch = drive(policy, pending, "mean", widening, false, sources, 0, "first_open", refine, reroot_depth);
              CHECK(kept.size() > 20);
              CHECK(kept == scratch);
            }
      }
}

TEST_CASE("mcts: a transposition adds an edge visit, not a second count of the child") {
  Config c = classic();
  c.set("search.branching=2");
  c.set("search.backup=mean");  // the hand-computed values below are means
  HandDriven h(c);
  VariantGraph& g = h.g;
  auto expand = [&h](const std::string& hash, double reward) { return h.expand(hash, reward).second; };
  int a = expand("a", 1.0);  // root: (0 + 1) / 2 = 0.5
  int b = expand("b", 0.0);  // root: (0 + 1 + 0) / 3
  CHECK(g.node(0).visits == 3);
  CHECK(g.node(0).value_sum / g.node(0).visits == doctest::Approx(1.0 / 3));
  // The root is full (branching 2): UCT descends into a (Q 1 > Q 0), whose child is b again.
  int again = expand("b", 99.0);
  CHECK(again == b);
  CHECK(g.edge(a, b)->transposition);
  CHECK(g.edge(a, b)->visits == 1);
  CHECK(g.node(b).visits == 1);  // b itself was not visited twice
  // a = mean(own 1, b 0 with weight 1) = 0.5; root = (0 + 2*0.5 + 1*0) / 4 = 0.25
  CHECK(g.node(a).value_sum / g.node(a).visits == doctest::Approx(0.5));
  CHECK(g.node(0).visits == 4);
  CHECK(g.node(0).value_sum / g.node(0).visits == doctest::Approx(0.25));
}

TEST_CASE("mcts: expansion=compare expands a node with room unless a child's value beats it") {
  // UCT c = 0.2, max backup. The root has reward 0 and room for 3 children.
  Config c = classic();
  c.set("search.branching=3");
  c.set("search.expansion=compare");
  c.set("search.exploration=0.2");
  HandDriven h(c);
  VariantGraph& g = h.g;
  auto expand = [&h](const std::string& hash, double reward) { return h.expand(hash, reward); };
  auto [p1, a] = expand("a", -0.5);  // nothing to compare yet: the root is expanded
  CHECK(p1 == 0);
  // Root N = 2. Child a: Q -0.5, n 1 -> -0.5 + 0.2 sqrt(ln 2) = -0.33; the virtual child
  // (the root's own reward 0, n 1) -> 0 + 0.17 = 0.17 wins: the root is expanded again.
  auto [p2, b] = expand("b", 1.0);
  CHECK(p2 == 0);
  // Root N = 3. Child b: Q 1 + 0.2 sqrt(ln 3) = 1.21 beats the virtual 0.21 though the root
  // still has room: the descent goes into b (first_open would have expanded the root).
  auto [p3, c1] = expand("c", 0.2);
  CHECK(p3 == b);
  CHECK(g.node(0).visits == 4);
  CHECK_THROWS_AS(
      [] {
        Config bad;
        bad.set("search.expansion=sideways");
        MctsStrategy::Parts::from_config(bad);
      }(),
      InputError);
  (void)a;
  (void)c1;
}

TEST_CASE("mcts: expansion=adaptive values expanding a node by what its generated children brought") {
  // UCT c = 0.2; the root (reward 0) has room for 8 children; its first three come out at -1,
  // -1 and -0.1. Before the fourth selection (root N = 4): child c is -0.1 + 0.2 sqrt(ln 4) =
  // 0.135; compare's virtual child (the root's own 0, one visit) 0 + 0.235 = 0.235 wins, so the
  // root is expanded again; adaptive's generation arm is the mean of 0, -1, -1 and -0.1 over
  // four visits, -0.525 + 0.2 sqrt(ln 4 / 4) = -0.41, so the descent goes into c instead.
  for (const char* expansion : {"compare", "adaptive"}) {
    CAPTURE(std::string(expansion));
    Config c = classic();
    c.set("search.branching=8");
    c.set(std::string("search.expansion=") + expansion);
    c.set("search.exploration=0.2");
    HandDriven h(c);
    CHECK(h.expand("a", -1.0).first == 0);
    CHECK(h.expand("b", -1.0).first == 0);  // both: -1 + 0.21 loses to 0.21 and to -0.55
    auto [p3, child_c] = h.expand("c", -0.1);
    CHECK(p3 == 0);
    auto [p4, d] = h.expand("d", 0.3);
    CHECK(p4 == (std::string(expansion) == "compare" ? 0 : child_c));
    (void)d;
  }
}

TEST_CASE("mcts: a sample backed up across a cycle leaves what mean backup then recompute leaves") {
  // 0 -> a -> b -> a (b's edge back to a closes a cycle), b -> c. c's evaluation walks 0 a b c;
  // recomputing leaf first, b reads a (its child too) before a is recomputed: the sample must
  // already be in a's sums there, as the mean backup put it.
  for (const char* backup : {"mean", "max", "power_mean"}) {
    CAPTURE(std::string(backup));
    Config c = classic();
    c.set(std::string("search.backup=") + backup);
    MctsStrategy m(CommonStrategySettings::from_config(c), MctsStrategy::Parts::from_config(c));
    VariantGraph g;
    auto node = [](const char* hash, double reward) {
      return NodeRecord{.status = NodeStatus::ok, .visits = 3, .value_sum = 3 * reward, .reward = reward, .hash = hash};
    };
    g.add_root(node("root", 0.0));
    const int a = g.add_child(0, node("a", 0.5), EdgeRecord{.visits = 2}).node;
    const int b = g.add_child(a, node("b", -0.25), EdgeRecord{.visits = 2}).node;
    CHECK(g.add_child(b, node("a", 0.0), EdgeRecord{.visits = 1}).closes_cycle);
    const int leaf = g.add_child(b, node("c", 0.75), EdgeRecord{}).node;
    g.node(leaf).visits = 0, g.node(leaf).value_sum = 0;
    VariantGraph expected = g;
    const std::vector<int> path{0, a, b, leaf};
    backup_mean(expected, path, 0.75);
    m.recompute(expected, path);
    m.on_evaluated(g, Selection{Selection::Kind::expand, b, {0, a, b}, 1}, leaf, 0.75);
    for (int n = 0; n < g.size(); ++n) {
      CAPTURE(n);
      CHECK(g.node(n).visits == expected.node(n).visits);
      CHECK(g.node(n).value_sum == expected.node(n).value_sum);  // bit for bit
      for (int child : g.children(n)) CHECK(g.edge(n, child)->visits == expected.edge(n, child)->visits);
    }
    CHECK(g.node(a).value_sum != node("a", 0.5).value_sum);  // the sample reached it
  }
}

TEST_CASE("mcts: a child that improves on its node is expanded next, up to search.chain_length steps") {
  // UCT c = 0.2, max backup, room for 3 children everywhere. Without chains the descent goes
  // back to the root while it has room; with chain_length 2 an improving child is expanded
  // next, twice in a row at most, and a child that does not improve ends the chain.
  Config c = classic();
  c.set("search.branching=3");
  c.set("search.exploration=0.2");
  HandDriven plain(c);
  auto [p0, a0] = plain.expand("a", 1.0);
  CHECK(p0 == 0);
  CHECK(plain.expand("b", 2.0).first == 0);  // first_open: the root still has room
  c.set("search.chain_length=2");
  HandDriven h(c);
  auto [r, a] = h.expand("a", 1.0);  // improves on the root (0): a chain starts at a
  CHECK(r == 0);
  auto [pa, b] = h.expand("b", 2.0);  // chain step 1 expanded a; b improves on a
  CHECK(pa == a);
  auto [pb, c1] = h.expand("c", 3.0);  // chain step 2 expanded b; c improves, but the chain is at its length
  CHECK(pb == b);
  CHECK(h.expand("d", -1.0).first == 0);  // a descent again: the root has room
  auto [pd, e] = h.expand("e", 0.5);  // no improvement from d's expansion: still descending
  CHECK(pd == 0);
  CHECK(h.g.node(0).visits == 6);  // every result backed up along its path, chain steps included
  (void)a0;
  (void)c1;
  (void)e;
}

TEST_CASE("mcts: search.chain=record goes on only while the chain sets records") {
  // Chains of up to 3 steps, first_open descents, the root's reward 0. Both rules go on while
  // each child is a record (a record also beats its parent) and stop at a child below its
  // parent; they part at a child that beats its parent but not the best so far.
  Config c = classic();
  c.set("search.branching=3");
  c.set("search.exploration=0.2");
  c.set("search.chain_length=3");
  for (const char* rule : {"improving", "record"}) {
    CAPTURE(std::string(rule));
    c.set(std::string("search.chain=") + rule);
    HandDriven h(c);
    auto [r, a] = h.expand("a", 1.0);  // a record, and better than the root: a chain starts at a
    CHECK(r == 0);
    auto [pa, b] = h.expand("b", 3.0);  // step 1 expands a; b: a record, better than a
    CHECK(pa == a);
    auto [pb, x] = h.expand("x", 2.0);  // step 2 expands b; x is below b: either chain ends
    CHECK(pb == b);
    const int after_x = h.expand("y", 2.5).first;  // a descent (the root has room, first_open)
    CHECK(after_x == 0);
    // y (2.5) improved on the root (0) but is no record (3): only improving expands it next.
    auto [py, z] = h.expand("z", 0.0);
    CHECK(py == (std::string(rule) == "improving" ? *h.g.find("y") : 0));
    (void)x;
    (void)z;
  }
  CHECK_THROWS_AS(
      [] {
        Config bad;
        bad.set("search.chain=longest");
        MctsStrategy::Parts::from_config(bad);
      }(),
      InputError);
}

TEST_CASE("mcts: search.reroot_depth starts descents below a deep lineage, and changes nothing above that depth") {
  // One child per node: every selection expands the lineage's leaf, one level deeper each time.
  auto lineage = [](int reroot_depth, int length) {
    Config c = classic();
    c.set("search.branching=1");
    c.set_value("search.reroot_depth", reroot_depth, "test");
    HandDriven h(c);
    std::vector<Selection> selections;
    for (int k = 0; k < length; ++k) {
      Selection s = *h.m.next(h.g);
      selections.push_back(s);
      h.add(s, "n" + std::to_string(k), 0.1 * k);
    }
    return std::make_pair(selections, h.g.node(0).visits);
  };
  auto [plain, plain_root_visits] = lineage(0, 12);
  auto [rerooted, rerooted_root_visits] = lineage(4, 12);
  for (size_t k = 0; k < plain.size(); ++k) {
    CAPTURE(k);
    CHECK(plain[k].node == rerooted[k].node);  // the same nodes expanded
    CHECK(plain[k].path.front() == 0);
    CHECK(plain[k].path.size() == k + 1);      // the whole lineage walked
    if (k <= 4) CHECK(rerooted[k].path == plain[k].path);  // within the limit: as without it
    CHECK(rerooted[k].path.size() <= 5);       // beyond it: at most the limit's depth walked
  }
  CHECK(rerooted.back().path.front() != 0);
  CHECK(plain_root_visits == 13);
  CHECK(rerooted_root_visits < plain_root_visits);  // statistics above the start stay as they were
}

TEST_CASE("mcts: a repair is reached through the failed variant it repairs") {
  // Branching 1: the root's only child fails and the Debugger repairs it. The repair hangs
  // below the failed node; the descent passes through that node (never expanding it) to the
  // repair, where the search goes on. It used to stop there: "search space exhausted".
  for (const char* expansion : {"first_open", "compare"}) {
    CAPTURE(std::string(expansion));
    Config c = classic();
    c.set("search.branching=1");
    c.set(std::string("search.expansion=") + expansion);
    HandDriven h(c);
    auto [root, failed] = h.expand("f", -1.0, NodeStatus::failed);
    CHECK(root == 0);
    Selection repair = *h.m.next(h.g);
    CHECK(repair.kind == Selection::Kind::debug);
    CHECK(repair.node == failed);
    const int fixed = h.add(repair, "r", 1.0);
    std::optional<Selection> next = h.m.next(h.g);
    REQUIRE(next.has_value());
    CHECK(next->kind == Selection::Kind::expand);
    CHECK(next->node == fixed);
    CHECK(next->path == std::vector<int>{0, failed, fixed});
  }
}

TEST_CASE("mcts: a descent that ends in a cycle starts again instead of ending the search") {
  // Branching 2, no repairs. root: a, and a failed leaf. a: c (0.5), then b (2.0). b: an edge
  // back to a (a transposition: a cycle), and a failed leaf. Every node but c is full. The
  // descent goes root -> a -> b (the best value), where the only open way on is a, already on
  // its path: a dead end. The search must not end there (c has room): it starts again, with b
  // ruled out for this selection, and expands c.
  Config c = classic();
  c.set("search.branching=2");
  c.set("search.debug_attempts=0");
  c.set("search.exploration=0.2");
  HandDriven h(c);
  auto [p_a, a] = h.expand("a", 1.0);
  CHECK(h.expand("f0", -1.0, NodeStatus::failed).first == 0);
  auto [p_c, c_node] = h.expand("c", 0.5);
  auto [p_b, b] = h.expand("b", 2.0);
  CHECK((p_a == 0 && p_c == a && p_b == a));
  auto [p_back, back] = h.expand("a", 0.0);  // b -> a
  CHECK((p_back == b && back == a));
  REQUIRE(h.g.edge(b, a) != nullptr);
  CHECK(h.g.reaches_cycle(a));
  CHECK(h.expand("f1", -1.0, NodeStatus::failed).first == b);
  std::optional<Selection> next = h.m.next(h.g);
  REQUIRE(next.has_value());
  CHECK(next->node == c_node);
  CHECK(next->path == std::vector<int>{0, a, c_node});
}

TEST_CASE("mcts: search.refine=bandit refines the incumbent while refining pays, and descends once it stops") {
  // Every child of the incumbent beats it for the first 12 expansions, then nothing beats it.
  // With the bandit, refinement keeps winning in the first phase (a greedy chain, where
  // first_open widens the root first); in the second its successes decay and descents take over.
  struct Counts {
    int early = 0, late = 0;  // expansions of the incumbent in steps 0-11 and 28-39
  };
  auto run = [](const char* refine) {
    Config c = classic();
    c.set("search.branching=4");
    c.set(std::string("search.refine=") + refine);
    c.set("search.refine_discount=0.7");
    HandDriven h(c);
    Counts n;
    int incumbent = 0;
    double best = 0;
    for (int step = 0; step < 40; ++step) {
      const bool improving = step < 12;
      const double reward = improving ? best + 0.1 : best - 0.5 - 0.01 * step;
      auto [parent, child] = h.expand(fmt::format("n{}", step), reward);
      if (parent == incumbent) (step < 12 ? n.early : n.late) += step < 12 || step >= 28;
      if (improving) incumbent = child, best = reward;
    }
    return n;
  };
  const Counts off = run("off"), bandit = run("bandit");
  CAPTURE(off.early);
  CAPTURE(bandit.early);
  CAPTURE(bandit.late);
  CHECK(bandit.early >= off.early + 4);
  CHECK(bandit.early >= 7);
  CHECK(bandit.late <= 4);  // the incumbent has room for only 4 children anyway; descents elsewhere
}

TEST_CASE("refine bandit: Beta draws have the right mean, counts decay, the better arm is chosen more") {
  CounterRng rng(7, 1);
  double sum = 0;
  for (int i = 0; i < 4000; ++i) sum += beta_draw(2, 6, rng);
  CHECK(sum / 4000 == doctest::Approx(0.25).epsilon(0.05));
  sum = 0;
  for (int i = 0; i < 4000; ++i) sum += beta_draw(0.5, 0.5, rng);
  CHECK(sum / 4000 == doctest::Approx(0.5).epsilon(0.05));
  // A prior on the refine arm: refinement first, until failures outweigh it.
  RefineBandit greedy(0.9, 5);
  CHECK(greedy.successes(RefineBandit::refine) == 5);
  int early = 0;
  for (int i = 0; i < 400; ++i) {
    CounterRng r(9, 1000 + static_cast<uint64_t>(i));
    early += greedy.choose(r) == RefineBandit::refine;
  }
  CHECK(early > 300);  // Beta(6, 1) against Beta(1, 1): refine with probability 6/7
  for (int i = 0; i < 20; ++i) greedy.update(RefineBandit::refine, false);
  CHECK(greedy.successes(RefineBandit::refine) == doctest::Approx(5 * std::pow(0.9, 20)));
  RefineBandit b(0.5);
  b.update(RefineBandit::refine, true);
  b.update(RefineBandit::refine, true);
  CHECK(b.successes(RefineBandit::refine) == doctest::Approx(1.5));  // 1 * 0.5 + 1
  for (int i = 0; i < 6; ++i) b.update(RefineBandit::descend, false);
  int refine = 0;
  for (int i = 0; i < 1000; ++i) refine += b.choose(rng) == RefineBandit::refine;
  CHECK(refine > 800);
}
