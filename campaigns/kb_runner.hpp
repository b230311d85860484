#pragma once
// `kmcts kernelbench`: one search per problem of a KernelBench level, problems spread over the
// GPUs (one search per GPU at a time), resumable after a kill, and the leaderboard at the end.
//
// OUT/campaign.json           what was asked (level, mode, budget, problems); a resume must agree
// OUT/runs/<problem>/         each problem's run directory (a normal kmcts run)
// OUT/problems/<problem>.json its result once its search ended (a problem with one is done)
// OUT/problems/<problem>.error.json why its last attempt failed (it stays unfinished)
// OUT/problems/<problem>.best.py  the best candidate's source, when one was correct
// OUT/summary.json, summary.md    the leaderboard over the selected problems
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "campaigns/kb_problems.hpp"
#include "core/options.hpp"

namespace kmcts {

struct KbLeaderboardRequest {
  std::filesystem::path kb_root;
  int level = 1;
  std::string problems;                 // select_problems() spec; "" = the whole level
  std::optional<int64_t> budget;        // evaluations per problem (search.budget)
  std::vector<std::string> gpus{"0"};   // evaluator.kernelbench.device per worker; "cpu" for tests
  std::string mode = "hardened";        // evaluator.kernelbench.mode
  std::filesystem::path out;
  Config config;                        // the base config of every search
  bool hygiene = true;                  // run the problem-hygiene check once per problem
  std::string hygiene_device;           // where the hygiene check runs ("" = the search's device)
  bool mpi = false;                     // evaluations go to MPI workers (gpus: one entry per slot)
  bool remeasure = true;                // score the best candidate by one new evaluation (kb_remeasure.hpp)
  bool compile_baseline = true;         // time torch.compile of the reference too (fast_p against it)
  double own_share_threshold = 0.9;     // fast_p_own counts candidates with at least this own-kernel share
  bool progress = true;
  std::string command_line;
};

/// Runs (or resumes) the campaign and returns the leaderboard summary; it also lists under
/// "unfinished" the problems without a result (interrupted). InputError before anything runs
/// for a bad request, a problem file that is not in KernelBench's format, or an OUT folder that
/// holds a different campaign.
nlohmann::json run_kernelbench_leaderboard(const KbLeaderboardRequest& request);

/// Asks a running campaign to stop: searches in flight finish their work in flight, no new
/// problem starts. Running the campaign again continues it: problems not started run, a
/// search killed mid-way resumes, and a search stopped this way (status "interrupted") starts
/// again, its run directory kept aside as runs/<problem>.interrupted-N. Async-signal-safe.
void request_leaderboard_stop();

/// A problem's result from its finished run directory: the best correct candidate other than
/// the seed (the seed is the reference itself), its speedups against eager and torch.compile
/// with their intervals, and the search's cost.
nlohmann::json kb_problem_result(const KbProblemFile& file, const std::filesystem::path& run_dir,
                                 const nlohmann::json& run_summary);

/// The share of kernel time in the candidate's own kernels from an evaluation's details (kernel
/// attribution, hardened mode on a GPU); null where it was not measured.
nlohmann::json own_share_of(const nlohmann::json& details);

}  // namespace kmcts
