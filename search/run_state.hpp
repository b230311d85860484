#pragma once
// What a run folder says now, for the commands that read runs (show, export, the run's HTML
// page): a run left "running" in its store whose lock no process holds was killed (kill -9, a
// crash, a lost machine). It shows as "stopped", with a summary computed from its event log,
// instead of "running" with nothing to show.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kmcts {

class RunStore;

/// The stored status, except "stopped" for a run still marked "running" that no process holds.
std::string run_status(const RunStore& store);

/// summary.json once the run finished; for a stopped run, the summary of its event log (status
/// "stopped", a message saying how to continue it); nullopt while a process still runs it.
std::optional<nlohmann::json> run_summary(const RunStore& store);

}  // namespace kmcts
