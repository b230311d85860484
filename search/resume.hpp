#pragma once
// `kmcts resume RUN_DIR`: continue a run that stopped at any moment (kill -9 included).
// Nothing recorded is lost: the event log is re-applied through the live code; agent calls
// that were in flight are recorded as cancelled and selected again; variants whose
// measurement was in flight are measured again.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kmcts {

struct ResumeRequest {
  std::filesystem::path run_dir;
  std::optional<int64_t> budget;   // a larger evaluation budget than the run had
  std::optional<int64_t> workers;
  /// Options set over the stored config for the rest of the run (e.g. the GPU a campaign gives
  /// it now), recorded in the run's config like --budget.
  std::map<std::string, nlohmann::json> overrides;
  /// `--set key=value` of the user: only the limits a run can be extended past
  /// (search.max_wall_s, max_agent_calls, max_tokens, max_dollars); other options would make
  /// the recorded log replay differently. Recorded in the run's config.
  std::vector<std::string> sets;
  bool progress = true;
};

/// Returns the summary, like run_search. InputError if the folder holds no unfinished run,
/// or if its problem folder is gone or its seed kernel changed.
nlohmann::json resume_search(const ResumeRequest& request);

}  // namespace kmcts
