#pragma once
// Replay misses: evaluations of a grid's runs that the replay evaluator could not answer (a
// variant the recorded sweep never measured). They are no kernel's failure: reports count them
// apart from failures, and a grid with more than a small share of them says so, at the end of
// `kmcts ablate` and in its report, since its runs explored a landscape the record lacks.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace kmcts {

/// Above this share of evaluations missed, the grid's figures say more about the record's
/// gaps than about the search policies compared.
constexpr double kReplayMissWarnShare = 0.05;

struct ReplayMisses {
  int64_t misses = 0;
  int64_t evaluations = 0;
  int runs = 0;              // runs counted
  int runs_with_misses = 0;
  double share() const { return evaluations > 0 ? static_cast<double>(misses) / static_cast<double>(evaluations) : 0; }
  void add(int64_t run_misses, int64_t run_evaluations);
};

/// The misses of the runs in these run directories (their stores' evaluations).
ReplayMisses count_replay_misses(const std::vector<std::filesystem::path>& run_dirs);

/// "" at or below `threshold`; else one sentence naming the share and what to do about it.
std::string replay_miss_warning(const ReplayMisses& m, double threshold = kReplayMissWarnShare);

}  // namespace kmcts
