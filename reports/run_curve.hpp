#pragma once
// What one run's evaluation sequence says about its search: the best speedup found after each
// evaluation, in the order the run store recorded the evaluations (the order they completed;
// a deterministic run orders them stably), and how many of them failed.
#include <optional>
#include <vector>

namespace kmcts {

class RunStore;

struct RunCurve {
  /// best_so_far[i]: the highest speedup (over the reference) of an ok evaluation among the
  /// first i + 1; 0 while none was ok.
  std::vector<double> best_so_far;
  int failures = 0;       // evaluations whose kernel failed (not ok, and not a replay miss)
  int replay_misses = 0;  // evaluations the replay evaluator could not answer (is_replay_miss)

  int evaluations() const { return static_cast<int>(best_so_far.size()); }
  /// The best after `evaluations` evaluations. A run that stopped earlier (its space was
  /// exhausted, or a budget of tokens or time ran out) keeps its last value; 0 for an empty run.
  double best_at(int evaluations) const;
  /// The best at the end of the run (best_at(evaluations())).
  double final_best() const;
  /// The 1-based count of evaluations after which the best first reached `target`; nullopt when
  /// it never did (the run is censored).
  std::optional<int> evaluations_to_reach(double target) const;
  /// failures / the evaluations that were not replay misses (0 when there are none).
  double failure_rate() const;
  /// replay_misses / evaluations (0 for an empty run).
  double replay_miss_rate() const;
};

/// Reads the curve from a run's store.
RunCurve read_run_curve(const RunStore& store);
/// The same from a sequence of (ok, speedup) results, in order; `missed` marks the replay misses
/// among them (by position; none when empty). What read_run_curve uses.
RunCurve curve_from_results(const std::vector<std::pair<bool, double>>& results, const std::vector<bool>& missed = {});

}  // namespace kmcts
