// An analytic stand-in for hardware, for tests and engine benchmarks: verdicts and timings are
// functions of the source, so searches over it cost microseconds and repeat exactly.
//
// Two modes. "space" (the default when the problem has a tunable space and a template): the
// evaluator cannot see node metadata, so it recovers the point a source was rendered from by
// matching the source against the template (synthetic::TemplateMatcher) and scores it on a
// structured landscape over the space (synthetic::SpaceLandscape: smooth per-parameter bowls,
// pairwise interactions, ruggedness, failure regions; formulas in landscape.hpp). A source
// that is no rendering of a point (LLM-written, hand-edited) falls back to "hash" mode, where a
// variant's log speedup is sigma * z with z ~ N(0,1) drawn from its hash, and it fails when a
// uniform from its hash is below the failure rate.
//
// Either way the seed kernel (and the space's default point) runs at speedup 1 exactly and
// never fails; a failing variant fails to compile in the first quarter of the failure band
// and is split evenly over wrong answer, crash and timeout in the rest.
//
// Measurement: 21 samples per kernel around the true median, each multiplied by
// exp(noise * z), z ~ N(0,1) from (seed, source, evaluation count of that source), so a
// re-evaluation measures differently while a single-worker run still repeats. The reported
// speedup is reference median / candidate median, as on hardware; with noise = 0 it is the
// landscape's value. latency_ms and compile_latency_ms sleep in measure() and build() to act
// as slow hardware in pipeline benchmarks.
#include <chrono>
#include <cmath>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join

#include "core/error.hpp"
#include "core/hash.hpp"
#include "core/rng.hpp"
#include "core/simulated_defect.hpp"
#include "hardware/evaluator.hpp"
#include "hardware/synthetic/landscape.hpp"

KMCTS_CHOICE_OPTION("evaluator.synthetic.mode", "auto", ({"auto", "hash", "space"}),
                    "Synthetic landscape: 'space' scores points of the problem's tunable space (smooth + "
                    "interactions + ruggedness), 'hash' scores each source by its hash; 'auto' = space when "
                    "the problem has one.")
KMCTS_OPTION("evaluator.synthetic.seed", Int, 0, 0, 9.0e15,
             "Seed of the synthetic landscape (fixed across search seeds, so they search one landscape).")
KMCTS_OPTION("evaluator.synthetic.sigma", Double, 0.5, 0.0, 5.0,
             "Scale of synthetic log speedups: hash mode exp(sigma * z), z ~ N(0,1); space mode bowl depths "
             "in [0.5, 1.5] * sigma per parameter.")
KMCTS_OPTION("evaluator.synthetic.interaction", Double, 0.1, 0.0, 5.0,
             "Space mode: amplitude (log speedup) of each pairwise parameter interaction term.")
KMCTS_OPTION("evaluator.synthetic.ruggedness", Double, 0.05, 0.0, 5.0,
             "Space mode: amplitude (log speedup) of per-point noise on the landscape; 0 = smooth.")
KMCTS_OPTION("evaluator.synthetic.noise", Double, 0.0, 0.0, 1.0,
             "Relative measurement noise of each synthetic timing sample (log-normal sigma); 0 = exact.")
KMCTS_OPTION("evaluator.synthetic.failure_rate", Double, 0.15, 0.0, 1.0,
             "Fraction of synthetic variants that fail (split over compile error, wrong answer, crash, timeout).")
KMCTS_OPTION("evaluator.synthetic.latency_ms", Double, 0.0, 0.0, 600000.0,
             "Sleep in every synthetic measurement (ms), to act as slow hardware.")
KMCTS_OPTION("evaluator.synthetic.compile_latency_ms", Double, 0.0, 0.0, 600000.0,
             "Sleep in every synthetic build (ms), to act as a slow compiler.")
KMCTS_OPTION("evaluator.synthetic.base_ns", Double, 1.0e6, 1.0, 1.0e12, "Synthetic median time of the seed kernel (ns).")

namespace kmcts {
namespace {

using synthetic::PointIndex;

void sleep_ms(double ms) {
  if (ms > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
}

bool space_mode(const Problem& problem, const std::string& mode) {
  const bool has_space = problem.space.has_value() && problem.template_source.has_value();
  if (mode == "space" && !has_space)
    throw InputError(fmt::format("evaluator.synthetic.mode=space needs a tunable space and a template; "
                                 "problem '{}' has none (use mode hash)", problem.name));
  return has_space && mode != "hash";
}

// The artifact names what measure() scores: "point:i,j,k" or "hash", after kWrongPrefix for a
// source the agent simulator made compute a wrong answer.
constexpr const char* kWrongPrefix = "simulated-wrong|";
std::string point_artifact(const PointIndex& x) {
  return fmt::format("point:{}", fmt::join(x, ","));
}
std::optional<PointIndex> point_of(const std::string& artifact) {
  if (artifact.rfind("point:", 0) != 0) return std::nullopt;
  PointIndex x;
  std::istringstream in(artifact.substr(6));
  for (std::string part; std::getline(in, part, ',');) x.push_back(std::stoi(part));
  return x;
}

class SyntheticEvaluator final : public Evaluator {
 public:
  SyntheticEvaluator(const Problem& problem, const Config& c)
      : seed_hash_(sha256_hex(problem.seed_source)),
        seed_(static_cast<uint64_t>(c.get_int("evaluator.synthetic.seed"))),
        sigma_(c.get_double("evaluator.synthetic.sigma")),
        noise_(c.get_double("evaluator.synthetic.noise")),
        failure_rate_(c.get_double("evaluator.synthetic.failure_rate")),
        latency_ms_(c.get_double("evaluator.synthetic.latency_ms")),
        compile_latency_ms_(c.get_double("evaluator.synthetic.compile_latency_ms")),
        base_ns_(c.get_double("evaluator.synthetic.base_ns")) {
    if (!space_mode(problem, c.get_string("evaluator.synthetic.mode"))) return;
    space_ = *problem.space;  // a copy: the landscape must not outlive what it points into
    const synthetic::LandscapeShape shape{seed_, sigma_, c.get_double("evaluator.synthetic.interaction"),
                                          c.get_double("evaluator.synthetic.ruggedness")};
    landscape_.emplace(*space_, shape);
    matcher_.emplace(*space_, *problem.template_source);
  }

  BuildResult build(const std::string& source) override {
    sleep_ms(compile_latency_ms_);
    BuildResult b;
    b.source_hash = sha256_hex(source);
    // A defect the agent simulator wrote (agents.backend=sim) is judged as it says; the point is
    // the source without its line.
    const std::optional<EvalResult> simulated = sim::simulated_result(source);
    const std::optional<PointIndex> point = matcher_ ? matcher_->match(sim::without_defect(source)) : std::nullopt;
    b.artifact = point ? point_artifact(*point) : "hash";
    b.ok = failure_draw(b.source_hash, point) >= failure_rate_ / 4 && source.find("#error") == std::string::npos;
    if (!b.ok) b.log = simulated ? simulated->log : "synthetic.cpp:1:1: error: synthetic compile failure";
    if (b.ok && simulated) b.artifact = kWrongPrefix + simulated->log + "\n";  // measure() answers from the line
    return b;
  }

  EvalResult measure(const BuildResult& build) override {
    sleep_ms(latency_ms_);
    EvalResult r;
    if (build.artifact.rfind(kWrongPrefix, 0) == 0)
      return *sim::simulated_result(build.artifact.substr(std::string(kWrongPrefix).size()));
    const std::string& h = build.source_hash;
    const std::optional<PointIndex> point = point_of(build.artifact);
    const double u = failure_draw(h, point);
    if (u < failure_rate_) {
      // The first quarter of the failure band failed to build; split the rest evenly.
      const double f = (u - failure_rate_ / 4) / (failure_rate_ * 3 / 4);
      r.verdict = f < 1.0 / 3 ? Verdict::wrong_answer : f < 2.0 / 3 ? Verdict::crash : Verdict::timeout;
      r.message = std::string("synthetic ") + to_string(r.verdict);
      if (r.verdict == Verdict::wrong_answer) r.details = {{"first_bad_index", 0}, {"max_abs_err", 1.0}};
      return r;
    }
    const double speedup = std::exp(log_speedup(h, point));
    const uint64_t count = next_evaluation(h);
    r.verdict = Verdict::ok;
    r.message = "ok";
    r.reference = stats(base_ns_, h, count, 0);
    r.candidate = stats(base_ns_ / speedup, h, count, 1);
    r.speedup = r.reference.median_ns / r.candidate.median_ns;
    return r;
  }

  nlohmann::json describe() const override {
    return {{"name", "synthetic"}, {"mode", landscape_ ? "space" : "hash"}, {"seed", seed_},
            {"sigma", sigma_}, {"noise", noise_}, {"failure_rate", failure_rate_},
            {"latency_ms", latency_ms_}, {"compile_latency_ms", compile_latency_ms_}};
  }

 private:
  // Hash-mode draws key on (seed, source hash); the seed is XORed in because CounterRng mixes
  // its seed anyway, and a second mixing step would buy nothing.
  double hash_draw(const std::string& hash, uint64_t index) const {
    return CounterRng(seed_ ^ string_key(hash), index).uniform();
  }

  // Uniform in [0, 1); the variant fails below the failure rate. The seed never fails.
  double failure_draw(const std::string& hash, const std::optional<PointIndex>& point) const {
    if (hash == seed_hash_ || (point && *point == landscape_->default_point())) return 1.0;
    return point ? landscape_->failure_draw(*point) : hash_draw(hash, 0);
  }

  double log_speedup(const std::string& hash, const std::optional<PointIndex>& point) const {
    if (hash == seed_hash_) return 0;
    if (point) return landscape_->log_speedup(*point);
    CounterRng rng(seed_ ^ string_key(hash), 1);
    return sigma_ * synthetic::standard_normal(rng);
  }

  // How many times this source has been measured before: the noise stream's key, so a
  // re-measurement differs while the n-th measurement of a source is always the same.
  uint64_t next_evaluation(const std::string& hash) {
    std::lock_guard<std::mutex> lock(mutex_);
    return evaluations_[hash]++;
  }

  // 21 samples: a +-0.1% deterministic spread whose middle sample is exactly `median_ns`
  // (so with noise 0 the median is exact), each times exp(noise * z).
  TimingStats stats(double median_ns, const std::string& hash, uint64_t count, uint64_t role) const {
    CounterRng rng(seed_ ^ string_key(hash), mix64(count * 2 + role + 3));
    std::vector<double> samples;
    for (int i = -10; i <= 10; ++i) {
      const double spread = 1 + 1e-4 * i * (0.5 + rng.uniform() * 0.5);
      const double z = synthetic::standard_normal(rng);
      samples.push_back(median_ns * spread * (noise_ > 0 ? std::exp(noise_ * z) : 1.0));
    }
    return TimingStats::from_samples(samples);
  }

  std::string seed_hash_;
  uint64_t seed_;
  double sigma_, noise_, failure_rate_, latency_ms_, compile_latency_ms_, base_ns_;
  std::optional<TunableSpace> space_;
  std::optional<synthetic::SpaceLandscape> landscape_;
  std::optional<synthetic::TemplateMatcher> matcher_;
  std::mutex mutex_;
  std::unordered_map<std::string, uint64_t> evaluations_;
};

}  // namespace

KMCTS_REGISTER(EvaluatorRegistry, "synthetic", [](const Problem& p, const Config& c) -> std::unique_ptr<Evaluator> {
  return std::make_unique<SyntheticEvaluator>(p, c);
})

}  // namespace kmcts
