#include "search_quality/quality.hpp"

#include <cctype>
#include <cmath>
#include <set>

#include "core/error.hpp"
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

EvaluatorSetup synthetic_setup(const QualitySettings& settings, const Landscape& landscape) {
  return [settings, landscape](Config& c, uint64_t seed) {
    c.set("evaluator.name=synthetic");
    c.set("evaluator.synthetic.mode=space");
    c.set_value("evaluator.synthetic.interaction", landscape.interaction, "bench");
    c.set_value("evaluator.synthetic.ruggedness", landscape.ruggedness, "bench");
    c.set_value("evaluator.synthetic.failure_rate", settings.failure_rate, "bench");
    // One landscape per seed: a strategy's figure then averages over landscapes of one shape,
    // not over search seeds on a single landscape that might happen to suit it.
    c.set_value("evaluator.synthetic.seed", static_cast<int64_t>(seed), "bench");
    for (const auto& setting : landscape.agents) c.set(setting);
  };
}

Recorded read_recorded(const fs::path& problem_dir, const std::vector<fs::path>& runs) {
  Recorded r;
  r.runs = runs;
  const Problem problem = load_problem(problem_dir);
  std::set<std::string> seen, failed;
  for (const auto& dir : runs) {
    auto store = RunStore::open(dir);
    if (store->run_info().value("problem", "") != problem.name)
      throw InputError(dir.string() + ": a run of '" + store->run_info().value("problem", "") + "', not of '" + problem.name + "'");
    r.device = store->run_info().value("evaluator", nlohmann::json::object());
    auto nodes = store->nodes();
    for (const auto& e : store->evaluations(false)) {
      const std::string& hash = nodes.at(static_cast<size_t>(e.node)).hash;
      seen.insert(hash);
      if (e.result.ok()) r.best_speedup = std::max(r.best_speedup, e.result.speedup);
      else failed.insert(hash);
    }
  }
  r.variants = static_cast<int>(seen.size());
  r.failed = static_cast<int>(failed.size());
  problem.space->for_each_point([&](const SpacePoint& p) { r.valid_points += problem.space->valid(p); });
  return r;
}

EvaluatorSetup recorded_setup(const Recorded& recorded, const std::vector<std::string>& agents) {
  std::string list;
  for (const auto& dir : recorded.runs) {
    if (!list.empty()) list += ',';  // (not "," + string: GCC 12 -O3 warns falsely, -Wrestrict)
    list += fs::absolute(dir).string();
  }
  return [list, agents](Config& c, uint64_t) {
    c.set("evaluator.name=replay");
    c.set_value("evaluator.replay.runs", list, "bench");
    for (const auto& setting : agents) c.set(setting);
  };
}

int evaluations_to_reach(const QualitySettings& settings, const EvaluatorSetup& evaluator, const StrategySpec& strategy,
                         uint64_t seed, double best, const fs::path& run_dir) {
  RunRequest r;
  r.problem_dir = settings.problem;
  evaluator(r.config, seed);
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
  if (!settings.keep_runs.empty()) {  // for a study of where the evaluations went (study.py)
    std::string name = strategy.name;
    for (char& ch : name)
      if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_') ch = '_';
    const fs::path kept = settings.keep_runs / name / ("seed" + std::to_string(seed));
    fs::remove_all(kept);
    fs::create_directories(kept.parent_path());
    fs::copy(run_dir, kept, fs::copy_options::recursive);
  }
  fs::remove_all(run_dir);
  return reached;
}

}  // namespace kmcts::bench
