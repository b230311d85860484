#include "search_quality/quality.hpp"

#include <cmath>

#include "core/problem.hpp"
#include "hardware/synthetic/landscape.hpp"
#include "search/run_search.hpp"
#include "search/run_store.hpp"

namespace kmcts::bench {

double true_best_speedup(const QualitySettings& settings, const Landscape& landscape, uint64_t seed) {
  const Problem problem = load_problem(settings.problem);
  const TunableSpace& space = *problem.space;
  // The evaluator builds its landscape from the same four numbers (sigma at its default).
  const synthetic::LandscapeShape shape{seed, Config().get_double("evaluator.synthetic.sigma"), landscape.interaction,
                                        landscape.ruggedness};
  const synthetic::SpaceLandscape scores(space, shape);
  const auto& params = space.params();
  synthetic::PointIndex x(params.size(), 0);
  double best = 1.0;  // the seed kernel: the default point never fails and scores 1
  while (true) {
    // The evaluator's rule: a point other than the default fails below the failure rate.
    if (space.valid(scores.to_space_point(x)) && scores.failure_draw(x) >= settings.failure_rate)
      best = std::max(best, std::exp(scores.log_speedup(x)));
    size_t p = 0;  // odometer over value indices
    while (p < x.size() && ++x[p] == static_cast<int>(params[p].values.size())) x[p++] = 0;
    if (p == x.size()) break;
  }
  return best;
}

int evaluations_to_reach(const QualitySettings& settings, const Landscape& landscape, const StrategySpec& strategy,
                         uint64_t seed, double best, const fs::path& run_dir) {
  RunRequest r;
  r.problem_dir = settings.problem;
  r.config.set("evaluator.name=synthetic");
  r.config.set("evaluator.synthetic.mode=space");
  r.config.set_value("evaluator.synthetic.interaction", landscape.interaction, "bench");
  r.config.set_value("evaluator.synthetic.ruggedness", landscape.ruggedness, "bench");
  r.config.set_value("evaluator.synthetic.failure_rate", settings.failure_rate, "bench");
  // One landscape per seed: a strategy's figure then averages over landscapes of one shape,
  // not over search seeds on a single landscape that might happen to suit it.
  r.config.set_value("evaluator.synthetic.seed", static_cast<int64_t>(seed), "bench");
  r.config.set_value("search.seed", static_cast<int64_t>(seed), "bench");
  r.config.set_value("search.budget", settings.budget, "bench");
  r.config.set_value("search.workers", 1, "bench");  // exact repeatability
  for (const auto& s : strategy.settings) r.config.set(s);
  r.run_dir = run_dir;
  r.progress = false;
  run_search(r);
  int reached = 0, count = 0;
  for (const auto& e : RunStore::open(run_dir)->evaluations(false)) {
    ++count;
    if (e.result.ok() && e.result.speedup >= (1 - settings.tolerance) * best * (1 - 1e-12)) {
      reached = count;
      break;
    }
  }
  fs::remove_all(run_dir);
  return reached;
}

}  // namespace kmcts::bench
