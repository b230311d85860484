#include <fmt/format.h>

#include "app/commands.hpp"
#include "search/replay.hpp"

namespace kmcts::app {

Command add_replay(CLI::App& root) {
  auto run_dir = std::make_shared<std::string>();
  CLI::App* cmd = root.add_subcommand(
      "replay", "Rebuild a run's graph from its event log and check it equals the stored one (exit 1 if not)");
  cmd->add_option("RUN_DIR", *run_dir, "Run directory")->required();
  return [run_dir] {
    ReplayReport r = replay_run(*run_dir);
    if (!r.identical) {
      fmt::print("replay differs after {} events: {}\n", r.events, r.mismatch);
      return 1;
    }
    fmt::print("replayed {} events: the rebuilt graph equals the stored one ({} nodes, {} edges)\n", r.events, r.nodes, r.edges);
    if (!r.statistics_compared)
      fmt::print("the run never finished: visit counts and values were not compared (they reach the store "
                 "every search.store_flush_s; `kmcts resume` brings them up to date)\n");
    return 0;
  };
}

}  // namespace kmcts::app
