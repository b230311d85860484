// The swappable MCTS parts against hand-computed values.
#include <doctest/doctest.h>

#include <array>
#include <cmath>

#include "search/backup.hpp"
#include "search/coordinator_state.hpp"
#include "search/expansion_rule.hpp"
#include "search/pending.hpp"
#include "search/selection_policy.hpp"
#include "search/value_scale.hpp"
#include "search/widening.hpp"

using namespace kmcts;

namespace {
Config with(std::initializer_list<const char*> sets) {
  Config c;
  for (const char* s : sets) c.set(s);
  return c;
}
}  // namespace

TEST_CASE("selection: UCT and PUCT scores") {
  CounterRng rng(1, 2);
  auto uct = SelectionPolicyRegistry::instance().create("policy", "uct", with({"search.exploration=2"}));
  // child A: Q 0.75, n 4 -> 0.75 + 2*sqrt(ln 10 / 4) = 0.75 + 1.5174 = 2.267
  // child B: Q 1.0,  n 9 -> 1.0 + 2*sqrt(ln 10 / 9) = 1.0 + 1.0116 = 2.012
  CHECK(uct->choose({10}, {{0.75, 4, 0.5}, {1.0, 9, 0.5}}, rng) == 0);
  CHECK(uct->choose({10}, {{1.0, 9, 0.5}, {0.0, 0, 0.5}}, rng) == 1);  // unvisited first
  auto puct = SelectionPolicyRegistry::instance().create("policy", "puct", with({"search.puct.c=1"}));
  // A: 0.2 + 1*0.9*sqrt(16)/(1+3) = 0.2 + 0.9 = 1.1;  B: 0.5 + 1*0.1*4/(1+1) = 0.7
  CHECK(puct->choose({16}, {{0.2, 3, 0.9}, {0.5, 1, 0.1}}, rng) == 0);
  // With equal priors the better Q wins.
  CHECK(puct->choose({16}, {{0.2, 3, 0.5}, {0.5, 3, 0.5}}, rng) == 1);
}

TEST_CASE("selection: Thompson samples around Q with spread sigma/sqrt(n+1); repeatable") {
  auto thompson = SelectionPolicyRegistry::instance().create("policy", "thompson", with({"search.thompson.sigma=1"}));
  // A well-visited child with Q 1 against a well-visited child with Q 0: the first nearly
  // always wins (difference 1, sd of the difference sqrt(2/101) = 0.14 -> 7 sigma).
  int first = 0;
  for (uint64_t key = 0; key < 200; ++key) {
    CounterRng rng(7, key);
    first += thompson->choose({200}, {{1.0, 100, 0.5}, {0.0, 100, 0.5}}, rng) == 0;
  }
  CHECK(first == 200);
  // Two unvisited children with equal Q: each wins about half the time.
  int left = 0;
  for (uint64_t key = 0; key < 400; ++key) {
    CounterRng rng(7, key);
    left += thompson->choose({1}, {{0.0, 0, 0.5}, {0.0, 0, 0.5}}, rng) == 0;
  }
  CHECK(left > 140);
  CHECK(left < 260);
  CounterRng a(3, 4), b(3, 4);
  CHECK(thompson->choose({1}, {{0, 0, 0.5}, {0, 0, 0.5}}, a) == thompson->choose({1}, {{0, 0, 0.5}, {0, 0, 0.5}}, b));
}

TEST_CASE("selection: epsilon-greedy") {
  std::vector<ChildStats> children{{0.1, 1, 1}, {0.9, 1, 1}, {0.5, 1, 1}};
  auto greedy = SelectionPolicyRegistry::instance().create("policy", "egreedy", with({"search.policy_epsilon=0"}));
  CounterRng rng(1, 1);
  for (int i = 0; i < 20; ++i) CHECK(greedy->choose({3}, children, rng) == 1);
  auto random = SelectionPolicyRegistry::instance().create("policy", "egreedy", with({"search.policy_epsilon=1"}));
  int counts[3] = {0, 0, 0};
  for (int i = 0; i < 300; ++i) counts[random->choose({3}, children, rng)]++;
  for (int c : counts) CHECK(c > 60);
}

TEST_CASE("pending work: WU-UCT, virtual loss, none") {
  auto wu = PendingTreatmentRegistry::instance().create("pending", "wu_uct", Config());
  ChildStats c = wu->child(0.8, 3, 2, 0.5);
  CHECK(c.q == doctest::Approx(0.8));  // Q untouched
  CHECK(c.visits == 5);                // pending counted for exploration
  CHECK(wu->parent(10, 2).visits == 12);
  auto vl = PendingTreatmentRegistry::instance().create(
      "pending", "virtual_loss", with({"search.virtual_loss.weight=1", "search.virtual_loss.value=-1"}));
  // (0.8*3 + (-1)*2) / (3 + 2) = 0.4/5 = 0.08
  c = vl->child(0.8, 3, 2, 0.5);
  CHECK(c.q == doctest::Approx(0.08));
  CHECK(c.visits == 5);
  CHECK(vl->child(0.8, 0, 0, 0.5).q == doctest::Approx(0.8));  // nothing pending, nothing visited
  auto none = PendingTreatmentRegistry::instance().create("pending", "none", Config());
  CHECK(none->child(0.8, 3, 2, 0.5).visits == 3);
  CHECK(none->parent(10, 2).visits == 10);
}

TEST_CASE("backup: mean, max and power mean of own reward and weighted children") {
  std::vector<WeightedValue> kids{{1.0, 2}, {-0.5, 1}, {3.0, 0}};  // the last edge was never visited
  auto mean = BackupRegistry::instance().create("backup", "mean", Config());
  // (0.2 + 2*1.0 + 1*(-0.5)) / (1 + 2 + 1) = 1.7 / 4 = 0.425
  CHECK(mean->value(0.2, kids) == doctest::Approx(0.425));
  auto max = BackupRegistry::instance().create("backup", "max", Config());
  CHECK(max->value(0.2, kids) == doctest::Approx(1.0));  // unvisited edges do not count
  auto p1 = BackupRegistry::instance().create("backup", "power_mean", with({"search.backup_power=1"}));
  CHECK(p1->value(0.2, kids) == doctest::Approx(0.425));  // p = 1 is the mean
  auto p2 = BackupRegistry::instance().create(
      "backup", "power_mean", with({"search.backup_power=2", "search.reward_clip=3", "search.failure_penalty=-1"}));
  // shift 3: ((3.2^2 + 2*4^2 + 1*2.5^2)/4)^(1/2) - 3 = sqrt((10.24+32+6.25)/4) - 3 = 3.4821 - 3
  CHECK(p2->value(0.2, kids) == doctest::Approx(std::sqrt(48.49 / 4) - 3));
  CHECK(p2->value(0.2, kids) > mean->value(0.2, kids));
  CHECK(p2->value(0.2, kids) < max->value(0.2, kids));
  CHECK(mean->value(0.7, {}) == doctest::Approx(0.7));  // a leaf's value is its reward
}

TEST_CASE("widening: fixed and progressive") {
  auto fixed = WideningRegistry::instance().create("widening", "fixed", with({"search.branching=3"}));
  CHECK(fixed->max_children(1) == 3);
  CHECK(fixed->max_children(1000) == 3);
  auto pw = WideningRegistry::instance().create(
      "widening", "progressive", with({"search.widening_k=1", "search.widening_alpha=0.5", "search.widening_max=5"}));
  CHECK(pw->max_children(0) == 1);
  CHECK(pw->max_children(1) == 1);
  CHECK(pw->max_children(2) == 2);   // ceil(1.414)
  CHECK(pw->max_children(4) == 2);   // ceil(2)
  CHECK(pw->max_children(5) == 3);   // ceil(2.236)
  CHECK(pw->max_children(100) == 5); // capped
}

TEST_CASE("value scale: tree min-max scales against every reward measured, not the siblings") {
  auto tree = ValueScaleRegistry::instance().create("value scale", "tree", with({}));
  ValueRange measured;
  for (double r : {0.5, -1.0, 3.0, 1.0}) measured.add(r);
  CHECK(measured.lo == -1.0);
  CHECK(measured.hi == 3.0);
  // Two poor children stay poor (siblings would give them 0 and 1), a value out of range is clamped.
  std::vector<ChildStats> poor = {{-1.0, 2, 1}, {0.0, 1, 1}, {5.0, 1, 1}};
  tree->apply(poor, measured);
  CHECK(poor[0].q == doctest::Approx(0.0));
  CHECK(poor[1].q == doctest::Approx(0.25));
  CHECK(poor[2].q == doctest::Approx(1.0));
  CHECK(poor[0].visits == 2);
  // Nothing or one reward measured: no spread, every value 0.5.
  std::vector<ChildStats> early = {{2.0, 1, 1}, {0.0, 1, 1}};
  tree->apply(early, {});
  CHECK(early[0].q == 0.5);
  ValueRange one;
  one.add(2.0);
  tree->apply(early, one);
  CHECK(early[1].q == 0.5);
}

TEST_CASE("value scale: none leaves values as they are, siblings min-max scales them") {
  auto none = ValueScaleRegistry::instance().create("value scale", "none", with({}));
  auto siblings = ValueScaleRegistry::instance().create("value scale", "siblings", with({}));
  std::vector<ChildStats> children = {{1.0, 3, 1}, {3.0, 1, 1}, {2.0, 2, 1}};
  none->apply(children, {});
  CHECK(children[0].q == 1.0);
  CHECK(children[1].q == 3.0);
  siblings->apply(children, {});
  CHECK(children[0].q == doctest::Approx(0.0));
  CHECK(children[1].q == doctest::Approx(1.0));
  CHECK(children[2].q == doctest::Approx(0.5));
  CHECK(children[2].visits == 2);  // only the values change
  std::vector<ChildStats> equal = {{4.0, 1, 1}, {4.0, 2, 1}};
  siblings->apply(equal, {});
  CHECK(equal[0].q == 0.5);
  CHECK(equal[1].q == 0.5);
  // With UCT on top, the exploration term is weighed against the spread: as backed up, the same
  // two children choose differently on a 20x scale and on a 1.05x scale; scaled, alike.
  auto uct = SelectionPolicyRegistry::instance().create("policy", "uct", with({"search.exploration=0.3"}));
  CounterRng rng(1, 2);
  std::vector<ChildStats> wide = {{3.0, 10, 1}, {0.0, 1, 1}}, narrow = {{0.05, 10, 1}, {0.0, 1, 1}};
  CHECK(uct->choose({11}, wide, rng) == 0);
  CHECK(uct->choose({11}, narrow, rng) == 1);  // exploration swamps a 0.05 difference
  siblings->apply(wide, {});
  siblings->apply(narrow, {});
  CHECK(uct->choose({11}, wide, rng) == 0);
  CHECK(uct->choose({11}, narrow, rng) == 0);
}

namespace {

// A node (reward 0) with generated children: each {own reward, edge visits, backed-up value};
// a reward below -5 is a failed child. Rewards measured span [-1, 1].
VariantGraph node_with_children(std::initializer_list<std::array<double, 3>> children, double share) {
  VariantGraph g;
  g.add_root(NodeRecord{.status = NodeStatus::ok, .visits = 1, .value_sum = 0, .reward = 0, .hash = "root"});
  g.node(0).next_plan_share = share;
  int k = 0;
  for (const auto& [reward, edge_visits, value] : children) {
    const bool failed = reward < -5;
    const int visits = static_cast<int>(edge_visits);
    NodeRecord n{.status = failed ? NodeStatus::failed : NodeStatus::ok, .visits = visits, .value_sum = value * visits,
                 .reward = failed ? -1.0 : reward, .hash = "c" + std::to_string(k++)};
    g.add_child(0, n, EdgeRecord{.visits = visits});
  }
  return g;
}

double generate_rate(const ExpansionRule& rule, const VariantGraph& g) {
  ValueRange tree;
  tree.add(-1), tree.add(1);
  int generated = 0;
  for (uint64_t i = 0; i < 4000; ++i) {
    CounterRng rng(7, i);
    const std::optional<bool> choice = rule.generate(g, 0, tree, rng);
    REQUIRE(choice.has_value());
    generated += *choice;
  }
  return generated / 4000.0;
}

}  // namespace

TEST_CASE("expansion=thompson: generating or descending by what each has brought, the Planner's preference first") {
  auto rule = ExpansionRuleRegistry::instance().create("expansion rule", "thompson", with({}));
  CHECK(rule->competes());
  // Generation has failed three times here; descending into the one good child has paid at
  // every one of its 9 later visits: descend.
  const double poor_generation = generate_rate(*rule, node_with_children({{-9, 1, 0}, {-9, 1, 0}, {-9, 1, 0}, {1, 10, 1}}, 0));
  CHECK(poor_generation < 0.05);
  // Two generations, both at the best reward measured, never descended into again: generate.
  const double good_generation = generate_rate(*rule, node_with_children({{1, 1, 1}, {1, 1, 1}}, 0));
  CHECK(good_generation > 0.75);
  // Before any child, the arms start alike (1 when the Planner is asked afresh) and the
  // Planner's preference for the queued plan tips them: a plan 4 times its call's mean prior
  // against one a quarter of it.
  const double even = generate_rate(*rule, node_with_children({}, 0)), neutral = generate_rate(*rule, node_with_children({}, 1));
  CHECK(even == neutral);
  CHECK(even == doctest::Approx(0.5).epsilon(0.06));
  const double preferred = generate_rate(*rule, node_with_children({}, 4)), shunned = generate_rate(*rule, node_with_children({}, 0.25));
  CHECK(preferred > even + 0.2);
  CHECK(shunned < even - 0.2);
  // Weighted 0, the Planner is ignored: its preferred plan gets the even odds.
  auto deaf = ExpansionRuleRegistry::instance().create("expansion rule", "thompson", with({"search.expansion_planner=0"}));
  CHECK(generate_rate(*deaf, node_with_children({}, 4)) == even);
  // A stronger prior keeps the Planner's word longer against the same evidence.
  auto sure = ExpansionRuleRegistry::instance().create("expansion rule", "thompson", with({"search.expansion_prior=20"}));
  const auto evidence = node_with_children({{0, 1, 0}, {0, 1, 0}, {0, 3, 0}}, 4);
  CHECK(generate_rate(*sure, evidence) > generate_rate(*rule, evidence) + 0.1);
  // The other rules leave the choice to the policy.
  for (const char* other : {"first_open", "compare", "adaptive"}) {
    CounterRng rng(1, 1);
    CHECK_FALSE(ExpansionRuleRegistry::instance().create("expansion rule", other, with({}))->generate(
        node_with_children({}, 4), 0, ValueRange{}, rng).has_value());
  }
}

TEST_CASE("planner shares: each spare plan's prior over the mean prior of its call") {
  std::vector<double> shares;
  // The rule planner's priors: a step (1) taken; a step, a pair (0.5) and a jump (0.25) spare.
  detail::queue_shares(shares, Plan{"step", 1.0}, {Plan{"step", 1.0}, Plan{"pair", 0.5}, Plan{"jump", 0.25}});
  REQUIRE(shares.size() == 3);
  CHECK(shares[0] == doctest::Approx(1.0 / 0.6875));
  CHECK(shares[1] == doctest::Approx(0.5 / 0.6875));
  CHECK(shares[2] == doctest::Approx(0.25 / 0.6875));
  // Appended after what is queued; no positive prior: 1 each (no preference).
  detail::queue_shares(shares, Plan{"a", 0.0}, {Plan{"b", 0.0}});
  REQUIRE(shares.size() == 4);
  CHECK(shares[3] == 1.0);
}
