// TimingStats arithmetic on synthetic samples, with the expected numbers worked out in the
// comments (nvbench style), and the EvalResult JSON round trip.
#include <doctest/doctest.h>

#include <stdexcept>

#include "core/eval_result.hpp"

namespace kmcts {
namespace {

TEST_CASE("cpu timing stats: ten samples with one outlier") {
  // Sorted: 10 20 30 40 50 60 70 80 90 1000 (given shuffled: the order must not matter).
  TimingStats t = TimingStats::from_samples({90, 10, 1000, 30, 20, 50, 40, 70, 60, 80});
  CHECK(t.samples() == 10);
  CHECK(t.min_ns == 10);
  // Quantiles interpolate at p*(n-1): median at 4.5 -> (50+60)/2; q1 at 2.25 -> 30 + 0.25*10;
  // q3 at 6.75 -> 70 + 0.75*10.
  CHECK(t.median_ns == doctest::Approx(55.0));
  CHECK(t.q1_ns == doctest::Approx(32.5));
  CHECK(t.q3_ns == doctest::Approx(77.5));
  // Mean (450 + 1000) / 10 = 145; squared deviations sum to 818250, / 9 = 90916.67,
  // sqrt = 301.524; cv = 301.524 / 145 = 2.07948.
  CHECK(t.mean_ns == doctest::Approx(145.0));
  CHECK(t.cv == doctest::Approx(2.0794752).epsilon(1e-6));
  // McKean-Schrader: c = round(5.5 - 1.96*sqrt(2.5)) = round(2.401) = 2,
  // SE = (x_(9) - x_(2)) / 3.92 = (90 - 20) / 3.92 = 17.857; rse = 17.857 / 55 = 0.324675.
  // The outlier moves the mean a lot and the median's error not at all.
  CHECK(t.rse_median == doctest::Approx(0.3246753).epsilon(1e-6));
}

TEST_CASE("cpu timing stats: one to a hundred") {
  std::vector<double> samples;
  for (int i = 100; i >= 1; --i) samples.push_back(i);
  TimingStats t = TimingStats::from_samples(samples);
  CHECK(t.median_ns == doctest::Approx(50.5));
  CHECK(t.q1_ns == doctest::Approx(25.75));  // position 24.75
  CHECK(t.q3_ns == doctest::Approx(75.25));  // position 74.25
  CHECK(t.mean_ns == doctest::Approx(50.5));
  // sd of 1..100 = 29.0115; cv = 29.0115 / 50.5.
  CHECK(t.cv == doctest::Approx(0.5744850).epsilon(1e-6));
  // c = round(50.5 - 1.96*5) = round(40.7) = 41; SE = (x_(60) - x_(41)) / 3.92 = 19 / 3.92.
  CHECK(t.rse_median == doctest::Approx(19.0 / 3.92 / 50.5).epsilon(1e-9));
  CHECK(t.samples_ns == samples);  // raw samples kept in measurement order
}

TEST_CASE("cpu timing stats: degenerate inputs") {
  TimingStats empty = TimingStats::from_samples({});
  CHECK(empty.samples() == 0);
  CHECK(empty.median_ns == 0);
  CHECK(empty.rse_median == 0);

  TimingStats one = TimingStats::from_samples({42});
  CHECK(one.median_ns == 42);
  CHECK(one.q1_ns == 42);
  CHECK(one.q3_ns == 42);
  CHECK(one.cv == 0);
  CHECK(one.rse_median == 0);  // no spread to estimate from one sample

  // Identical samples: no noise at all.
  TimingStats flat = TimingStats::from_samples(std::vector<double>(30, 7.0));
  CHECK(flat.median_ns == 7.0);
  CHECK(flat.cv == doctest::Approx(0.0));
  CHECK(flat.rse_median == 0);
}

TEST_CASE("cpu timing stats: the standard error of the median shrinks like 1/sqrt(n)") {
  // Uniform spacing over [100, 200): quadrupling n halves the order-statistic spread around
  // the median (up to rounding of c), so the rse roughly halves.
  auto uniform = [](int n) {
    std::vector<double> s;
    for (int i = 0; i < n; ++i) s.push_back(100.0 + 100.0 * i / n);
    return TimingStats::from_samples(s).rse_median;
  };
  double ratio = uniform(400) / uniform(1600);
  CHECK(ratio == doctest::Approx(2.0).epsilon(0.05));
}

TEST_CASE("cpu eval result: verdict names round-trip") {
  for (Verdict v : {Verdict::ok, Verdict::compile_error, Verdict::wrong_answer, Verdict::timeout, Verdict::crash,
                    Verdict::infra_error})
    CHECK(verdict_from_string(to_string(v)) == v);
  CHECK(std::string(to_string(Verdict::wrong_answer)) == "wrong_answer");
  CHECK_THROWS_AS(verdict_from_string("fast"), std::invalid_argument);
}

TEST_CASE("cpu eval result: JSON round trip with and without samples") {
  EvalResult r;
  r.verdict = Verdict::ok;
  r.message = "ok: speedup 2x";
  r.log = "warning: unused variable";
  r.candidate = TimingStats::from_samples({10, 11, 12, 13});
  r.reference = TimingStats::from_samples({20, 22, 24, 26});
  r.speedup = r.reference.median_ns / r.candidate.median_ns;
  r.details = {{"counters", {{"samples_candidate", 4}}}};
  r.compile_seconds = 0.5;
  r.run_seconds = 1.25;
  r.compile_cached = true;

  EvalResult back = eval_result_from_json(to_json(r, true));
  CHECK(back.verdict == Verdict::ok);
  CHECK(back.message == r.message);
  CHECK(back.log == r.log);
  CHECK(back.speedup == doctest::Approx(2.0));
  CHECK(back.details == r.details);
  CHECK(back.compile_seconds == 0.5);
  CHECK(back.run_seconds == 1.25);
  CHECK(back.compile_cached);
  CHECK(back.candidate.samples_ns == r.candidate.samples_ns);
  CHECK(back.candidate.median_ns == doctest::Approx(11.5));
  CHECK(back.reference.q3_ns == doctest::Approx(r.reference.q3_ns));
  CHECK(back.reference.rse_median == doctest::Approx(r.reference.rse_median));

  // Without samples the summary numbers survive on their own.
  EvalResult summary = eval_result_from_json(to_json(r, false));
  CHECK(summary.candidate.samples() == 0);
  CHECK(summary.candidate.median_ns == doctest::Approx(11.5));
  CHECK(summary.reference.cv == doctest::Approx(r.reference.cv));

  EvalResult failed;
  failed.verdict = Verdict::crash;
  failed.message = "crash: SIGSEGV";
  EvalResult failed_back = eval_result_from_json(to_json(failed, true));
  CHECK(failed_back.verdict == Verdict::crash);
  CHECK(failed_back.candidate.samples() == 0);
  CHECK_THROWS_AS(eval_result_from_json(nlohmann::json::array()), std::invalid_argument);
}

}  // namespace
}  // namespace kmcts
