// An analytic stand-in for hardware, for tests and engine benchmarks: every verdict and
// timing is a pure function of the source's hash, so searches over it are exactly
// repeatable and cost microseconds. The seed kernel always runs at speedup 1.
#include <cmath>
#include <string>

#include "core/hash.hpp"
#include "core/rng.hpp"
#include "hardware/evaluator.hpp"

KMCTS_OPTION("evaluator.synthetic.sigma", Double, 0.5, 0.0, 5.0,
             "Spread of synthetic log speedups: a variant's speedup is exp(sigma * z), z ~ N(0,1) from its hash.")
KMCTS_OPTION("evaluator.synthetic.failure_rate", Double, 0.15, 0.0, 1.0,
             "Fraction of synthetic variants that fail (split over compile error, wrong answer, crash, timeout).")
KMCTS_OPTION("evaluator.synthetic.base_ns", Double, 1.0e6, 1.0, 1.0e12, "Synthetic median time of the seed kernel (ns).")

namespace kmcts {
namespace {

class SyntheticEvaluator final : public Evaluator {
 public:
  SyntheticEvaluator(const Problem& problem, const Config& c)
      : seed_hash_(sha256_hex(problem.seed_source)),
        sigma_(c.get_double("evaluator.synthetic.sigma")),
        failure_rate_(c.get_double("evaluator.synthetic.failure_rate")),
        base_ns_(c.get_double("evaluator.synthetic.base_ns")) {}

  BuildResult build(const std::string& source) override {
    BuildResult b;
    b.source_hash = sha256_hex(source);
    b.artifact = b.source_hash;
    double u = draw(b.source_hash, 0);
    b.ok = !(b.source_hash != seed_hash_ && u < failure_rate_ / 4) && source.find("#error") == std::string::npos;
    if (!b.ok) b.log = "synthetic.cpp:1:1: error: synthetic compile failure";
    return b;
  }

  EvalResult measure(const BuildResult& build) override {
    EvalResult r;
    const std::string& h = build.source_hash;
    double u = draw(h, 0);
    if (h != seed_hash_ && u < failure_rate_) {
      // The first quarter of the failure band failed to build; split the rest evenly.
      double f = (u - failure_rate_ / 4) / (failure_rate_ * 3 / 4);
      r.verdict = f < 1.0 / 3 ? Verdict::wrong_answer : f < 2.0 / 3 ? Verdict::crash : Verdict::timeout;
      r.message = std::string("synthetic ") + to_string(r.verdict);
      if (r.verdict == Verdict::wrong_answer) r.details = {{"first_bad_index", 0}, {"max_abs_err", 1.0}};
      return r;
    }
    double z = std::sqrt(-2 * std::log(1 - draw(h, 1))) * std::cos(2 * M_PI * draw(h, 2));
    double speedup = h == seed_hash_ ? 1.0 : std::exp(sigma_ * z);
    r.verdict = Verdict::ok;
    r.message = "ok";
    r.reference = stats(base_ns_, h, 3);
    r.candidate = stats(base_ns_ / speedup, h, 4);
    r.speedup = speedup;
    return r;
  }

  nlohmann::json describe() const override {
    return {{"name", "synthetic"}, {"sigma", sigma_}, {"failure_rate", failure_rate_}};
  }

 private:
  static double draw(const std::string& hash, uint64_t index) {
    CounterRng rng(string_key(hash), index);
    return rng.uniform();
  }
  // 21 samples within +-0.1% around the median, so the median is exactly `median_ns`.
  static TimingStats stats(double median_ns, const std::string& hash, uint64_t key) {
    std::vector<double> samples;
    CounterRng rng(string_key(hash), key);
    for (int i = -10; i <= 10; ++i) samples.push_back(median_ns * (1 + 1e-4 * i * (0.5 + rng.uniform() * 0.5)));
    return TimingStats::from_samples(samples);
  }

  std::string seed_hash_;
  double sigma_;
  double failure_rate_;
  double base_ns_;
};

}  // namespace

KMCTS_REGISTER(EvaluatorRegistry, "synthetic", [](const Problem& p, const Config& c) -> std::unique_ptr<Evaluator> {
  return std::make_unique<SyntheticEvaluator>(p, c);
})

}  // namespace kmcts
