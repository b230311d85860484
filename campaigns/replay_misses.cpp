#include "campaigns/replay_misses.hpp"

#include <fmt/format.h>

#include "core/eval_result.hpp"
#include "search/run_store.hpp"

namespace kmcts {

void ReplayMisses::add(int64_t run_misses, int64_t run_evaluations) {
  misses += run_misses;
  evaluations += run_evaluations;
  ++runs;
  runs_with_misses += run_misses > 0;
}

ReplayMisses count_replay_misses(const std::vector<std::filesystem::path>& run_dirs) {
  ReplayMisses m;
  for (const auto& dir : run_dirs) {
    int64_t misses = 0, evaluations = 0;
    for (const EvaluationRecord& e : RunStore::open(dir)->evaluations(/*with_samples=*/false)) {
      ++evaluations;
      misses += is_replay_miss(e.result);
    }
    m.add(misses, evaluations);
  }
  return m;
}

std::string replay_miss_warning(const ReplayMisses& m, double threshold) {
  if (m.misses == 0 || m.share() <= threshold) return "";
  return fmt::format(
      "{:.1f}% of the evaluations ({} of {}, in {} of {} runs) were replay misses: variants the recorded runs never "
      "measured (above the {:.0f}% this grid's figures can absorb). They are counted apart from kernel failures, but "
      "the searches compared explored a landscape the record lacks: record more (a run with evaluator.replay.fallback "
      "set measures what is missing) before reading the differences.",
      100 * m.share(), m.misses, m.evaluations, m.runs_with_misses, m.runs, 100 * threshold);
}

}  // namespace kmcts
