// The synthetic evaluator's landscapes: determinism, the seed at speedup 1, the arithmetic of
// a smooth separable landscape, failure fractions, fallback to hash mode, noise, latency.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>

#include "core/error.hpp"
#include "hardware/evaluator.hpp"
#include "hardware/synthetic/landscape.hpp"

using namespace kmcts;
using synthetic::PointIndex;
using nlohmann::json;

namespace {

// A problem built in code: a space, a template and the seed rendered at the default point.
Problem make_problem(const json& space_json, const std::string& template_text) {
  Problem p;
  p.name = "synthetic-test";
  p.space = TunableSpace::from_json(space_json, "test space");
  p.template_source = template_text;
  p.seed_source = p.space->render(template_text, p.space->default_point());
  return p;
}

// Three parameters of 5, 4 and 7 values, integers and strings, no constraints.
Problem three_params() {
  return make_problem(json::parse(R"({
    "params": [{"name": "TILE", "values": [8, 16, 32, 64, 128]},
               {"name": "UNROLL", "values": [1, 2, 4, 8]},
               {"name": "ORDER", "values": ["ijk", "ikj", "jik", "jki", "kij", "kji", "tiled"]}],
    "default": {"TILE": 8, "UNROLL": 1, "ORDER": "ijk"}})"),
                      "tile={{TILE}} unroll={{UNROLL}} order={{ORDER}}");
}

Problem fixture_problem() { return load_problem(std::filesystem::path(KMCTS_SOURCE_DIR) / "tests/fixtures/synthetic_space"); }

Config synthetic_config(std::initializer_list<std::pair<const char*, json>> values) {
  Config c;
  c.set("evaluator.name=synthetic");
  for (const auto& [key, value] : values) c.set_value(std::string("evaluator.synthetic.") + key, value, "test");
  return c;
}

std::unique_ptr<Evaluator> make_synthetic(const Problem& p, const Config& c) {
  return EvaluatorRegistry::instance().create("evaluator", "synthetic", p, c);
}

// Every point of the space (constraints ignored), in odometer order.
void for_each_point(const TunableSpace& space, const std::function<void(const PointIndex&)>& visit) {
  PointIndex x(space.params().size(), 0);
  for (;;) {
    visit(x);
    size_t p = 0;
    while (p < x.size() && ++x[p] == static_cast<int>(space.params()[p].values.size())) x[p++] = 0;
    if (p == x.size()) return;
  }
}

std::string source_at(const Problem& p, const PointIndex& x) {
  SpacePoint point;
  for (size_t i = 0; i < x.size(); ++i) point[p.space->params()[i].name] = p.space->params()[i].values[x[i]];
  return p.space->render(*p.template_source, point);
}

synthetic::LandscapeShape shape_of(uint64_t seed, double interaction, double ruggedness) {
  return {seed, 0.5, interaction, ruggedness};
}

}  // namespace

TEST_CASE("synthetic: one config gives one landscape; another seed another") {
  const Problem p = fixture_problem();
  auto a = make_synthetic(p, synthetic_config({{"seed", 4}})), b = make_synthetic(p, synthetic_config({{"seed", 4}}));
  auto c = make_synthetic(p, synthetic_config({{"seed", 5}}));
  int differ = 0, points = 0;
  for_each_point(*p.space, [&](const PointIndex& x) {
    const std::string source = source_at(p, x);
    const EvalResult ra = a->evaluate(source), rb = b->evaluate(source), rc = c->evaluate(source);
    CHECK(ra.verdict == rb.verdict);
    CHECK(ra.speedup == rb.speedup);
    differ += ra.verdict != rc.verdict || ra.speedup != rc.speedup;
    ++points;
  });
  CHECK(points == 72);  // 6 x 4 x 3
  CHECK(differ > points / 2);
  CHECK(a->describe()["mode"] == "space");
}

TEST_CASE("synthetic: the seed kernel scores exactly 1 and never fails, in both modes") {
  for (const char* mode : {"space", "hash"}) {
    CAPTURE(mode);
    const Problem p = fixture_problem();
    auto e = make_synthetic(p, synthetic_config({{"mode", mode}, {"failure_rate", 1.0}, {"ruggedness", 1.0}}));
    const EvalResult r = e->evaluate(p.seed_source);
    CHECK(r.verdict == Verdict::ok);
    CHECK(r.speedup == 1.0);
    CHECK(r.candidate.median_ns == 1.0e6);  // base_ns
    CHECK(r.candidate.samples() == 21);
    CHECK(e->evaluate("// any other kernel\n").verdict != Verdict::ok);  // failure_rate 1
  }
}

TEST_CASE("synthetic: a smooth separable landscape, climbed by coordinate ascent") {
  // interaction = ruggedness = 0 leaves log s(x) = sum_p w_p (t_p(d)^2 - t_p(x)^2), with
  // t_p(x) = (x_p - o_p) / (n_p - 1): the optimum is the bowl centre o, worth
  // exp(sum_p w_p t_p(d)^2) over the seed, and ascent along each axis in turn reaches it.
  const Problem p = three_params();
  auto e = make_synthetic(p, synthetic_config({{"seed", 7}, {"interaction", 0.0}, {"ruggedness", 0.0}, {"failure_rate", 0.0}}));
  const synthetic::SpaceLandscape land(*p.space, shape_of(7, 0, 0));
  const PointIndex d = land.default_point(), o = land.bowl_centre();
  REQUIRE(d == PointIndex{0, 0, 0});
  REQUIRE(o != d);  // seed 7 puts the optimum away from the seed, or the test proves nothing

  const auto t = [&](const PointIndex& x, size_t q) {
    return (x[q] - o[q]) / (static_cast<double>(p.space->params()[q].values.size()) - 1);
  };
  const auto expected_log = [&](const PointIndex& x) {
    double sum = 0;
    for (size_t q = 0; q < 3; ++q) sum += land.bowl_weight()[q] * (t(d, q) * t(d, q) - t(x, q) * t(x, q));
    return sum;
  };
  for (double w : land.bowl_weight()) CHECK((w >= 0.25 && w < 0.75));  // sigma 0.5 x [0.5, 1.5)

  PointIndex best_seen = d;
  double best_speedup = 0;
  for_each_point(*p.space, [&](const PointIndex& x) {
    const EvalResult r = e->evaluate(source_at(p, x));
    REQUIRE(r.verdict == Verdict::ok);
    CHECK(std::log(r.speedup) == doctest::Approx(expected_log(x)).epsilon(1e-12));
    if (r.speedup > best_speedup) best_speedup = r.speedup, best_seen = x;
  });
  CHECK(best_seen == o);

  PointIndex x = d;
  double current = e->evaluate(source_at(p, x)).speedup;
  for (int sweep = 0; sweep < 3; ++sweep)
    for (size_t q = 0; q < x.size(); ++q) {
      PointIndex trial = x;
      for (trial[q] = 0; trial[q] < static_cast<int>(p.space->params()[q].values.size()); ++trial[q]) {
        const double s = e->evaluate(source_at(p, trial)).speedup;
        if (s > current) current = s, x = trial;
      }
    }
  CHECK(x == o);
  CHECK(current == doctest::Approx(std::exp(expected_log(o))).epsilon(1e-12));
  CHECK(current > 1.0);
}

TEST_CASE("synthetic: failures cover the requested fraction of the space, all four kinds") {
  // g(x) is uniform over landscapes, so over 100 seeds x 72 points (defaults excluded: they
  // never fail) the failed fraction is 0.3 up to sampling error (about 0.01 here, larger than
  // binomial because failures come in regions).
  const Problem p = fixture_problem();
  std::map<Verdict, int> kinds;
  int failed = 0, total = 0;
  for (int seed = 0; seed < 100; ++seed) {
    auto e = make_synthetic(p, synthetic_config({{"seed", seed}, {"failure_rate", 0.3}}));
    for_each_point(*p.space, [&](const PointIndex& x) {
      const std::string source = source_at(p, x);
      if (source == p.seed_source) return;
      const EvalResult r = e->evaluate(source);
      failed += !r.ok();
      ++kinds[r.verdict];
      ++total;
    });
  }
  CHECK(static_cast<double>(failed) / total == doctest::Approx(0.3).epsilon(0.1));  // within 0.03
  // A quarter of the failures fail to build; the rest split in thirds.
  CHECK(static_cast<double>(kinds[Verdict::compile_error]) / failed == doctest::Approx(0.25).epsilon(0.2));
  for (Verdict v : {Verdict::wrong_answer, Verdict::crash, Verdict::timeout})
    CHECK(static_cast<double>(kinds[v]) / failed == doctest::Approx(0.25).epsilon(0.2));

  auto none = make_synthetic(p, synthetic_config({{"failure_rate", 0.0}}));
  for_each_point(*p.space, [&](const PointIndex& x) { CHECK(none->evaluate(source_at(p, x)).ok()); });
}

TEST_CASE("synthetic: the template matcher recovers points, also with values that prefix each other") {
  const Problem p = make_problem(json::parse(R"({
    "params": [{"name": "S", "values": ["a", "ab", "abb"]}, {"name": "N", "values": [1, 12, 122]}],
    "default": {"S": "a", "N": 1}})"), "{{S}}b{{N}}2;{{S}}");
  const synthetic::TemplateMatcher matcher(*p.space, *p.template_source);
  for_each_point(*p.space, [&](const PointIndex& x) { CHECK(matcher.match(source_at(p, x)) == x); });
  CHECK_FALSE(matcher.match("ab12;ab").has_value());  // S differs between its two occurrences
  CHECK_FALSE(matcher.match("ab12;a ").has_value());  // trailing text
  CHECK_FALSE(matcher.match("").has_value());
}

TEST_CASE("synthetic: sources that render no point fall back to hash mode") {
  const Problem p = fixture_problem();
  auto e = make_synthetic(p, synthetic_config({}));
  const std::string rendered = source_at(p, {2, 1, 0});
  CHECK(e->build(rendered).artifact == "point:2,1,0");
  CHECK(e->build(rendered + "// hand edit\n").artifact == "hash");
  auto hash_mode = make_synthetic(p, synthetic_config({{"mode", "hash"}}));
  CHECK(hash_mode->build(rendered).artifact == "hash");
  CHECK(hash_mode->describe()["mode"] == "hash");

  Problem no_space = p;
  no_space.space.reset();
  no_space.template_source.reset();
  CHECK(make_synthetic(no_space, synthetic_config({}))->describe()["mode"] == "hash");
  CHECK_THROWS_WITH_AS(make_synthetic(no_space, synthetic_config({{"mode", "space"}})),
                       doctest::Contains("evaluator.synthetic.mode=space needs a tunable space"), InputError);
}

TEST_CASE("synthetic: measurement noise differs per re-measurement, and repeats per evaluator") {
  const Problem p = fixture_problem();
  const std::string source = source_at(p, {3, 2, 1});
  auto a = make_synthetic(p, synthetic_config({{"noise", 0.05}, {"failure_rate", 0.0}}));
  auto b = make_synthetic(p, synthetic_config({{"noise", 0.05}, {"failure_rate", 0.0}}));
  auto exact = make_synthetic(p, synthetic_config({{"failure_rate", 0.0}}));
  const double a1 = a->evaluate(source).speedup, a2 = a->evaluate(source).speedup;
  CHECK(a1 != a2);
  CHECK(b->evaluate(source).speedup == a1);  // the n-th measurement of a source is fixed
  CHECK(b->evaluate(source).speedup == a2);
  const double truth = exact->evaluate(source).speedup;
  CHECK(exact->evaluate(source).speedup == truth);
  // The median of 21 samples with 5% log-normal noise, in a ratio of two: within ~15% of truth.
  CHECK(std::abs(std::log(a1 / truth)) < 0.15);
  CHECK(a->evaluate(source).candidate.cv > 0.02);
}

TEST_CASE("synthetic: build and measure take at least their configured latency") {
  const Problem p = fixture_problem();
  auto e = make_synthetic(p, synthetic_config({{"latency_ms", 30.0}, {"compile_latency_ms", 20.0}, {"failure_rate", 0.0}}));
  using Clock = std::chrono::steady_clock;
  const auto ms_since = [](Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); };
  auto start = Clock::now();
  const BuildResult built = e->build(p.seed_source);
  CHECK(ms_since(start) >= 20.0);
  start = Clock::now();
  CHECK(e->measure(built).ok());
  CHECK(ms_since(start) >= 30.0);
}
