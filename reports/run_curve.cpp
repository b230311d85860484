#include "reports/run_curve.hpp"

#include <algorithm>

#include "search/run_store.hpp"

namespace kmcts {

double RunCurve::best_at(int evaluations) const {
  if (best_so_far.empty() || evaluations <= 0) return 0;
  return best_so_far[static_cast<size_t>(std::min(evaluations, this->evaluations())) - 1];
}

double RunCurve::final_best() const { return best_at(evaluations()); }

std::optional<int> RunCurve::evaluations_to_reach(double target) const {
  // best_so_far never decreases, so the first index at or above the target is a binary search.
  const auto it = std::lower_bound(best_so_far.begin(), best_so_far.end(), target);
  if (it == best_so_far.end()) return std::nullopt;
  return static_cast<int>(it - best_so_far.begin()) + 1;
}

double RunCurve::failure_rate() const {
  const int measured = evaluations() - replay_misses;
  return measured <= 0 ? 0 : static_cast<double>(failures) / static_cast<double>(measured);
}

double RunCurve::replay_miss_rate() const {
  return best_so_far.empty() ? 0 : static_cast<double>(replay_misses) / static_cast<double>(evaluations());
}

RunCurve curve_from_results(const std::vector<std::pair<bool, double>>& results, const std::vector<bool>& missed) {
  RunCurve curve;
  double best = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& [ok, speedup] = results[i];
    if (ok) best = std::max(best, speedup);
    else if (i < missed.size() && missed[i]) ++curve.replay_misses;
    else ++curve.failures;
    curve.best_so_far.push_back(best);
  }
  return curve;
}

RunCurve read_run_curve(const RunStore& store) {
  std::vector<std::pair<bool, double>> results;
  std::vector<bool> missed;
  for (const EvaluationRecord& e : store.evaluations(/*with_samples=*/false)) {
    results.emplace_back(e.result.ok(), e.result.speedup);
    missed.push_back(is_replay_miss(e.result));
  }
  return curve_from_results(results, missed);
}

}  // namespace kmcts
