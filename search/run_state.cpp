#include "search/run_state.hpp"

#include <fmt/format.h>

#include "search/replay.hpp"
#include "search/run_lock.hpp"
#include "search/run_store.hpp"

namespace kmcts {

std::string run_status(const RunStore& store) {
  std::string status = store.status();
  if (status == "running" && !folder_holder(store.dir())) status = "stopped";
  return status;
}

std::optional<nlohmann::json> run_summary(const RunStore& store) {
  if (auto summary = store.summary()) return summary;
  if (run_status(store) != "stopped") return std::nullopt;
  const std::string message = fmt::format(
      "its process stopped before the run finished (killed, or its machine lost); `kmcts resume {}` continues it",
      store.dir().string());
  try {
    return summarize_from_log(store.dir(), "stopped", message);
  } catch (const std::exception& e) {
    // A log that does not replay still has its stored rows to count.
    const auto evaluations = store.evaluations(/*with_samples=*/false);
    int failures = 0;
    for (const auto& ev : evaluations) failures += !ev.result.ok();
    return nlohmann::json{{"status", "stopped"},
                          {"message", message + fmt::format(" (its event log does not replay: {})", e.what())},
                          {"problem", store.run_info().value("problem", "")},
                          {"run_dir", store.dir().string()},
                          {"evaluations", evaluations.size()},
                          {"failures", failures},
                          {"nodes", store.nodes().size()},
                          {"edges", store.edges().size()}};
  }
}

}  // namespace kmcts
