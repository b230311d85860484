// The baseline strategies (random, linear, beam, egreedy_tree): next() on hand-built graphs
// where the right choice can be stated, and whole searches on the synthetic evaluator whose
// event logs must show each strategy's shape.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <set>

#include "search/run_search.hpp"
#include "search/run_store.hpp"
#include "search/exploration_schedule.hpp"
#include "search/mcts.hpp"
#include "search/recorded_config.hpp"
#include "search/strategy.hpp"

using namespace kmcts;
namespace fs = std::filesystem;

namespace {

// Adds a node (the root when parent < 0) with a known outcome, as if it had been evaluated.
int add(VariantGraph& g, int parent, double speedup, NodeStatus status = NodeStatus::ok) {
  NodeRecord n;
  n.hash = "h";
  n.hash += std::to_string(g.size());  // appended: GCC 12 misreads "h" + string as overlapping (-Wrestrict)
  int id = parent < 0 ? g.add_root(n) : g.add_child(parent, n, EdgeRecord{}).node;
  g.node(id).status = status;
  g.node(id).speedup = speedup;
  return id;
}

std::unique_ptr<Strategy> make(const std::string& name, std::map<std::string, nlohmann::json> options = {}) {
  Config c;
  for (const auto& [key, value] : options) c.set_value(key, value, "test");
  return StrategyRegistry::instance().create("strategy", name, c);
}

// root 1.0 -> a 2.0 -> b 3.0, root -> f (failed), a -> p (pending).
struct Sample {
  VariantGraph g;
  int root, a, b, f, p;
  Sample() {
    root = add(g, -1, 1.0);
    a = add(g, root, 2.0);
    b = add(g, a, 3.0);
    f = add(g, root, 0, NodeStatus::failed);
    p = add(g, a, 0, NodeStatus::pending);
  }
};

// Records a new child of `s.node` and its evaluation, as the coordinator would.
int grow(Strategy& st, VariantGraph& g, const Selection& s, double speedup, NodeStatus status) {
  int c = add(g, s.node, speedup, NodeStatus::pending);
  st.on_child(g, s, c, true);
  g.node(c).status = status;
  g.node(c).speedup = speedup;
  st.on_evaluated(g, s, c, status == NodeStatus::ok ? 0.5 : -1.0);
  return c;
}

}  // namespace

TEST_CASE("strategies: every baseline is registered by name") {
  for (const char* name : {"mcts", "random", "linear", "beam", "egreedy_tree"})
    CHECK(StrategyRegistry::instance().contains(name));
}

TEST_CASE("linear strategy: expands the best ok node, one job at a time, then the next best") {
  Sample s;
  auto st = make("linear");
  auto first = st->next(s.g);
  REQUIRE(first);
  CHECK(first->node == s.b);
  CHECK(first->path == std::vector<int>{s.root, s.a, s.b});
  CHECK_FALSE(st->next(s.g));  // the trajectory waits for its one job
  st->on_expansion_failed(s.g, *first, true);  // b's planner ran dry: b is closed
  auto second = st->next(s.g);
  REQUIRE(second);
  CHECK(second->node == s.a);
}

TEST_CASE("linear strategy: repairs a failed child before refining again") {
  VariantGraph g;
  add(g, -1, 1.0);
  auto st = make("linear");
  auto job = st->next(g);
  int broken = grow(*st, g, *job, 0, NodeStatus::failed);
  auto repair = st->next(g);
  REQUIRE(repair);
  CHECK(repair->kind == Selection::Kind::debug);
  CHECK(repair->node == broken);
  CHECK(g.node(0).visits == 1);  // the failed child's penalty was backed up through the root
}

TEST_CASE("egreedy_tree strategy: epsilon 0 is greedy, epsilon 1 spreads over the candidates") {
  Sample s;
  auto greedy = make("egreedy_tree", {{"search.egreedy.epsilon", 0.0}});
  for (int i = 0; i < 3; ++i) CHECK(greedy->next(s.g)->node == s.b);
  CHECK(greedy->next(s.g)->node == s.b);   // branching 4: b's fourth expansion in flight
  CHECK(greedy->next(s.g)->node == s.a);   // b is full; a is next fastest
  auto spread = make("egreedy_tree", {{"search.egreedy.epsilon", 1.0}, {"search.branching", 64},
                                      {"search.egreedy.root_cap", 64}});
  std::map<int, int> picks;
  for (int i = 0; i < 60; ++i) {
    auto job = spread->next(s.g);
    REQUIRE(job);
    picks[job->node]++;
    spread->on_expansion_failed(s.g, *job, false);
  }
  CHECK(picks.size() == 3);  // root, a and b; never the failed or the pending node
  for (const auto& [node, n] : picks) CHECK(n >= 10);
}

TEST_CASE("egreedy_tree strategy: the root cap holds and a dead branch is pruned") {
  VariantGraph g;
  int root = add(g, -1, 3.0);
  auto st = make("egreedy_tree", {{"search.egreedy.epsilon", 0.0}, {"search.egreedy.root_cap", 1},
                                  {"search.egreedy.prune_after", 2}, {"search.debug_attempts", 0}});
  auto job = st->next(g);
  REQUIRE(job->node == root);
  int slow = grow(*st, g, *job, 1.5, NodeStatus::ok);
  // The root is still fastest, but its one draft is spent: the slower child is refined.
  for (int i = 0; i < 2; ++i) {
    job = st->next(g);
    REQUIRE(job);
    CHECK(job->node == slow);
    grow(*st, g, *job, 0, NodeStatus::failed);
  }
  CHECK_FALSE(st->next(g));  // slow has two failed children and no ok one: pruned
}

TEST_CASE("random strategy: uniform over ok nodes with capacity; root_only keeps to the seed") {
  Sample s;
  auto st = make("random", {{"search.branching", 64}});
  std::map<int, int> picks;
  for (int i = 0; i < 60; ++i) {
    auto job = st->next(s.g);
    picks[job->node]++;
    st->on_expansion_failed(s.g, *job, false);
  }
  CHECK(picks.size() == 3);
  CHECK_FALSE(picks.count(s.f));
  CHECK_FALSE(picks.count(s.p));
  auto root_only = make("random", {{"search.random.root_only", true}});
  for (int i = 0; i < 10; ++i) CHECK(root_only->next(s.g)->node == s.root);  // no cap on the root
}

TEST_CASE("beam strategy: waits for each generation, then keeps the fastest children") {
  VariantGraph g;
  add(g, -1, 1.0);
  auto st = make("beam", {{"search.beam.width", 2}, {"search.beam.children", 2}, {"search.debug_attempts", 0}});
  auto j1 = st->next(g), j2 = st->next(g);
  CHECK(j1->node == 0);
  CHECK(j2->node == 0);
  CHECK_FALSE(st->next(g));  // the seed has its two children in flight
  int c1 = grow(*st, g, *j1, 2.0, NodeStatus::ok);
  int c2 = grow(*st, g, *j2, 3.0, NodeStatus::ok);
  std::vector<int> order;
  for (int i = 0; i < 4; ++i) order.push_back(st->next(g)->node);
  CHECK(order == std::vector<int>{c2, c1, c2, c1});  // fewest children first, ties to the faster
  CHECK_FALSE(st->next(g));
}

TEST_CASE("beam strategy: a generation without an ok child falls back to the best open nodes") {
  VariantGraph g;
  add(g, -1, 1.0);
  auto st = make("beam", {{"search.beam.width", 1}, {"search.beam.children", 2}, {"search.debug_attempts", 0}});
  auto j1 = st->next(g), j2 = st->next(g);
  int c1 = grow(*st, g, *j1, 2.0, NodeStatus::ok);
  int c2 = grow(*st, g, *j2, 1.5, NodeStatus::ok);
  auto k1 = st->next(g), k2 = st->next(g);
  CHECK(k1->node == c1);
  CHECK(k2->node == c1);
  grow(*st, g, *k1, 0, NodeStatus::failed);
  grow(*st, g, *k2, 0, NodeStatus::failed);
  auto fallback = st->next(g);
  REQUIRE(fallback);
  CHECK(fallback->node == c2);  // root and c1 are full; c2 is the best node with room
}

// ---- whole searches on the synthetic evaluator ----

namespace {

struct Run {
  fs::path dir;
  nlohmann::json summary;
  std::vector<NodeRecord> nodes;
  std::vector<EdgeRecord> edges;
  std::vector<EventRecord> events;
};

Run search(const std::string& strategy, int budget, int workers, int seed, double failure_rate,
           std::map<std::string, nlohmann::json> options = {}) {
  Run run;
  run.dir = fs::temp_directory_path() /
            ("kmcts-test-strategy-" + strategy + "-" + std::to_string(::getpid()) + "-" + std::to_string(seed));
  fs::remove_all(run.dir);
  options.insert({{"evaluator.name", "synthetic"}, {"evaluator.synthetic.failure_rate", failure_rate},
                  {"search.strategy", strategy}, {"search.budget", budget}, {"search.workers", workers},
                  {"search.seed", seed}});
  RunRequest r;
  r.problem_dir = fs::path(KMCTS_SOURCE_DIR) / "tests/fixtures/synthetic_space";
  for (const auto& [key, value] : options) r.config.set_value(key, value, "test");
  r.run_dir = run.dir;
  r.progress = false;
  run.summary = run_search(r);
  auto store = RunStore::open(run.dir);
  run.nodes = store->nodes();
  run.edges = store->edges();
  run.events = store->events();
  fs::remove_all(run.dir);
  return run;
}

// Completed, spent its budget or said why not, and nothing was left pending.
void check_finished(const Run& run, int budget) {
  CHECK(run.summary["status"] == "completed");
  if (run.summary["evaluations"] != budget) CHECK(run.summary.value("message", "").find("exhausted") != std::string::npos);
  for (const auto& n : run.nodes) CHECK(n.status != NodeStatus::pending);
}

std::vector<std::string> trace(const Run& run) {
  std::vector<std::string> out;
  for (const auto& n : run.nodes) out.push_back(n.hash + " " + n.verdict + " " + std::to_string(n.visits));
  for (const auto& e : run.edges) out.push_back(std::to_string(e.parent) + "->" + std::to_string(e.child) + " " + e.plan);
  return out;
}

}  // namespace

TEST_CASE("strategies: whole searches finish, and single-worker runs repeat exactly") {
  for (const char* name : {"random", "linear", "beam", "egreedy_tree"}) {
    CAPTURE(name);
    auto busy = search(name, 25, 3, 2, 0.3);
    check_finished(busy, 25);
    CHECK(busy.nodes.at(0).visits >= busy.summary["evaluations"].get<int>());  // every reward backed up
    auto a = search(name, 20, 1, 7, 0.3), b = search(name, 20, 1, 7, 0.3), c = search(name, 20, 1, 8, 0.3);
    check_finished(a, 20);
    CHECK(trace(a) == trace(b));
    CHECK(trace(a) != trace(c));
  }
}

namespace {

int payload_int(const EventRecord& e, const char* key) { return e.payload.at(key).get<int>(); }

// The parent an agent job worked on, for "child" and "agent_failed" events.
int job_parent(const EventRecord& e) { return payload_int(e, e.kind == "child" ? "parent" : "node"); }

bool is_job(const EventRecord& e) { return e.kind == "child" || e.kind == "agent_failed"; }

}  // namespace

TEST_CASE("linear strategy: one job at a time, each refinement starts from the best node so far") {
  auto run = search("linear", 25, 3, 4, 0.3);
  check_finished(run, 25);
  std::map<int, double> ok_speedup;  // evaluated ok nodes so far
  std::map<int, int> children, attempts;
  std::set<int> closed;
  int awaiting = -1;  // the node whose evaluation the one job is waiting for
  for (const auto& e : run.events) {
    if (e.kind == "evaluation") {
      int n = payload_int(e, "node");
      if (n == awaiting) awaiting = -1;
      if (run.nodes.at(static_cast<size_t>(n)).status == NodeStatus::ok) ok_speedup[n] = run.nodes[static_cast<size_t>(n)].speedup;
    }
    if (!is_job(e)) continue;
    CHECK(awaiting == -1);  // no job overlapped another
    int parent = job_parent(e);
    if (e.payload.at("kind") == "expand") {
      int best = -1;
      for (const auto& [n, speedup] : ok_speedup)
        if (!closed.count(n) && children[n] < 4 && (best == -1 || speedup > ok_speedup[best])) best = n;
      CHECK(parent == best);
      if (e.kind == "child" && e.payload.at("new_edge").get<bool>()) children[parent]++;
      if (++attempts[parent] >= 8 || (e.kind == "agent_failed" && e.payload.at("exhausted").get<bool>())) closed.insert(parent);
    }
    if (e.kind == "child" && e.payload.at("new_node").get<bool>()) awaiting = payload_int(e, "child");
  }
}

TEST_CASE("beam strategy: generations of at most B members and B*N children, one after the other") {
  const int width = 2, children = 3;
  auto run = search("beam", 30, 3, 3, 0.0, {{"search.beam.width", width}, {"search.beam.children", children}});
  check_finished(run, 30);
  // Without failures the generation of a node is its number of expand edges from the root.
  std::map<int, int> generation{{0, 0}};
  std::map<int, std::set<int>> members;
  std::map<int, int> expand_edges, per_parent;
  for (const auto& e : run.edges) {
    if (!generation.count(e.child)) generation[e.child] = generation.at(e.parent) + (e.kind == EdgeKind::expand);
    if (e.kind != EdgeKind::expand) continue;
    members[generation[e.parent]].insert(e.parent);
    expand_edges[generation[e.parent]]++;
    CHECK(++per_parent[e.parent] <= children);
  }
  CHECK(members.size() >= 3);  // the budget reaches a few generations deep
  for (const auto& [g, m] : members) CHECK(static_cast<int>(m.size()) <= width);
  for (const auto& [g, n] : expand_edges) CHECK(n <= width * children);
  // A generation starts only after every node of the one before has been evaluated.
  std::set<int> evaluated;
  for (const auto& e : run.events) {
    if (e.kind == "evaluation") evaluated.insert(payload_int(e, "node"));
    if (e.kind != "child" || e.payload.at("kind") != "expand") continue;
    int g = generation.at(job_parent(e));
    for (const auto& [n, gn] : generation)
      if (gn == g && n < payload_int(e, "child")) CHECK(evaluated.count(n));
  }
}

TEST_CASE("egreedy_tree strategy: the root cap holds and a pruned node gets no further children") {
  auto run = search("egreedy_tree", 30, 1, 2, 0.6,
                    {{"search.egreedy.root_cap", 2}, {"search.egreedy.prune_after", 2}, {"search.debug_attempts", 0}});
  check_finished(run, 30);
  int root_children = 0;
  for (const auto& e : run.edges) root_children += e.parent == 0 && e.kind == EdgeKind::expand;
  CHECK(root_children <= 2);
  std::map<int, std::vector<int>> kids;  // expand children so far
  std::set<int> evaluated, pruned;
  for (const auto& e : run.events) {
    if (is_job(e) && e.payload.at("kind") == "expand") {
      int parent = job_parent(e);
      CHECK_FALSE(pruned.count(parent));
      if (e.kind == "child" && e.payload.at("new_edge").get<bool>()) kids[parent].push_back(payload_int(e, "child"));
    }
    if (e.kind == "evaluation") evaluated.insert(payload_int(e, "node"));
    for (const auto& [parent, list] : kids) {
      int failed = 0, ok = 0;
      for (int c : list) {
        if (!evaluated.count(c)) continue;
        failed += run.nodes.at(static_cast<size_t>(c)).status == NodeStatus::failed;
        ok += run.nodes.at(static_cast<size_t>(c)).status == NodeStatus::ok;
      }
      if (ok == 0 && failed >= 2) pruned.insert(parent);
    }
  }
  CHECK_FALSE(pruned.empty());  // the run did exercise pruning
}

TEST_CASE("mcts: expansion, exploration schedule, refinement and chains are parts registered by name") {
  CHECK(ExpansionRuleRegistry::instance().names() == std::vector<std::string>{"adaptive", "compare", "first_open", "thompson"});
  CHECK(ChainRuleRegistry::instance().names() == std::vector<std::string>{"improving", "record"});
  CHECK(ExplorationScheduleRegistry::instance().names() == std::vector<std::string>{"constant", "linear"});
  CHECK(RefinementRegistry::instance().names() == std::vector<std::string>{"bandit", "off"});
  Config c;
  c.set_value("search.expansion", "widest", "test");
  try {
    MctsStrategy::Parts::from_config(c);
    FAIL("an unknown expansion rule was accepted");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("widest") != std::string::npos);
    CHECK(std::string(e.what()).find("first_open") != std::string::npos);
  }
}

TEST_CASE("mcts: exploration anneals over the run's budget, fixed when the run starts") {
  Config c;
  c.set_value("search.budget", 100, "test");
  auto linear = ExplorationScheduleRegistry::instance().create("exploration schedule", "linear", c);
  CHECK(linear->weight(0) == 1.0);  // the default horizon, -1, is the budget
  CHECK(linear->weight(50) == doctest::Approx(0.5));
  CHECK(linear->weight(99) == 0.05);  // never under a twentieth
  CHECK(ExplorationScheduleRegistry::instance().create("exploration schedule", "constant", c)->weight(99) == 1.0);
  fix_anneal_horizon(c);
  CHECK(c.get_int("search.anneal_selections") == 100);
  c.set_value("search.budget", 400, "test");  // a resume with a larger --budget: the horizon stays
  fix_anneal_horizon(c);
  CHECK(c.get_int("search.anneal_selections") == 100);
  CHECK(ExplorationScheduleRegistry::instance().create("exploration schedule", "linear", c)->weight(50) ==
        doctest::Approx(0.5));
  // A recorded run's config: a run that predates the option (no key) searched with constant
  // exploration; -1 is its own budget, taken before a resume's --budget.
  Config resumed;
  resumed.set_value("search.budget", 60, "test");
  fix_recorded_config(resumed, {{"search", {{"budget", 60}}}});
  CHECK(resumed.get_int("search.anneal_selections") == 0);
  Config recorded_minus_one;
  recorded_minus_one.set_value("search.budget", 60, "test");
  fix_recorded_config(recorded_minus_one, {{"search", {{"budget", 60}, {"anneal_selections", -1}}}});
  CHECK(recorded_minus_one.get_int("search.anneal_selections") == 60);
  Config recorded_300;
  recorded_300.set_value("search.anneal_selections", 300, "test");
  fix_recorded_config(recorded_300, {{"search", {{"anneal_selections", 300}}}});
  CHECK(recorded_300.get_int("search.anneal_selections") == 300);
  c.set_value("search.anneal_selections", 0, "test");  // 0: constant, as recorded configs say it
  CHECK(ExplorationScheduleRegistry::instance().create("exploration schedule", "linear", c)->weight(50) == 1.0);
  // A search annealed over its budget is the one annealed over that many selections.
  auto by_budget = std::map<std::string, nlohmann::json>{{"search.anneal_selections", -1}};
  auto by_count = std::map<std::string, nlohmann::json>{{"search.anneal_selections", 20}};
  auto constant = std::map<std::string, nlohmann::json>{{"search.exploration_schedule", "constant"}};
  const auto a = trace(search("mcts", 20, 1, 7, 0.3, by_budget));
  CHECK(a == trace(search("mcts", 20, 1, 7, 0.3, by_count)));
  CHECK(a != trace(search("mcts", 20, 1, 7, 0.3, constant)));
}

TEST_CASE("mcts: a recorded run that predates search.reroot_repairs replays with the repair paths it made") {
  Config fresh;
  CHECK(fresh.get_bool("search.reroot_repairs"));  // new runs: repairs start as refinements do
  Config old;
  fix_recorded_config(old, {{"search", {{"budget", 60}, {"reroot_depth", 64}}}});
  CHECK_FALSE(old.get_bool("search.reroot_repairs"));  // from the root, as before the option
  Config recorded;
  fix_recorded_config(recorded, {{"search", {{"reroot_repairs", true}}}});
  CHECK(recorded.get_bool("search.reroot_repairs"));
}

TEST_CASE("mcts: annealed exploration and sibling-scaled values finish, repeat exactly, and change the search") {
  const std::map<std::string, nlohmann::json> tuned = {{"search.anneal_selections", 20},
                                                       {"search.value_scale", "siblings"},
                                                       {"search.expansion", "compare"},
                                                       {"search.exploration", 0.5}};
  auto busy = search("mcts", 25, 3, 2, 0.3, tuned);
  check_finished(busy, 25);
  auto a = search("mcts", 20, 1, 7, 0.3, tuned), b = search("mcts", 20, 1, 7, 0.3, tuned);
  check_finished(a, 20);
  CHECK(trace(a) == trace(b));
  // Late in the annealing the descent is greedy: against constant exploration, the same seed
  // takes another path.
  auto constant = tuned;
  constant["search.anneal_selections"] = 0;
  CHECK(trace(a) != trace(search("mcts", 20, 1, 7, 0.3, constant)));
  auto unscaled = tuned;
  unscaled["search.value_scale"] = "none";
  CHECK(trace(a) != trace(search("mcts", 20, 1, 7, 0.3, unscaled)));
}
