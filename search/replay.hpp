#pragma once
// Replay: rebuild a run's graph from its event log alone and check it equals the stored one.
// Every selection is asked of a fresh strategy and must match the recorded one; agent
// outcomes and measurements are taken from the log and the store, never recomputed; the
// rebuilt nodes, edges and events are compared with what the run recorded.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "search/records.hpp"

namespace kmcts {

struct ReplayReport {
  bool identical = false;
  int events = 0;        // events replayed
  int nodes = 0;
  int edges = 0;
  std::string mismatch;  // the first difference, naming the event and the field
  /// False for a run that never finished (killed, or still going): its stored visit counts
  /// and values may lag the event log by up to search.store_flush_s, so only the graph's
  /// shape, statuses and rewards are compared (`kmcts resume` brings them up to date).
  bool statistics_compared = true;
};

/// Throws InputError if RUN_DIR is not a run store or predates replayable logs.
ReplayReport replay_run(const std::filesystem::path& run_dir);

class RunStore;

/// The summary of a run whose process died before it finished (`kmcts show`, `export` and the
/// run's HTML page): its event log re-applied as replay_run does, then summarised as the run
/// would have summarised itself at its last event, with `status` and `message`. Its wall
/// seconds are those of the last event.
nlohmann::json summarize_from_log(const std::filesystem::path& run_dir, const std::string& status,
                                  const std::string& message);

/// Two event logs compared event by event, wall times and how LLM replies were fetched
/// (attempts, retries, cassette hit or recorded) aside: "" when equal, else the first
/// difference, down to the payload field (an event only `rebuilt` has counts; one only
/// `recorded` has does not).
std::string compare_events(const std::vector<EventRecord>& rebuilt, const std::vector<EventRecord>& recorded);

/// Two finished runs compared: their event logs (as compare_events), nodes (hash, status, reward,
/// visits, values, debug attempts) and edges. "" when they are the same graph, else the first
/// difference. `kmcts ablate --replay-only` re-runs a run and checks it against the original.
std::string compare_runs(const RunStore& rebuilt, const RunStore& recorded);

}  // namespace kmcts
