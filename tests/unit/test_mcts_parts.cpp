// The swappable MCTS parts against hand-computed values.
#include <doctest/doctest.h>

#include <cmath>

#include "search/backup.hpp"
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
