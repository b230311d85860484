#include <fmt/format.h>

#include "app/commands.hpp"
#include "app/interrupts.hpp"
#include "app/mpi_launch.hpp"
#include "campaigns/ablation_runner.hpp"

namespace kmcts::app {
namespace {

struct AblateArgs {
  AblationRequest request;
  std::optional<size_t> jobs;
  bool replay_only = false;
  bool quiet = false;
  MpiArgs mpi;
};

int run_ablate(AblateArgs& a) {
  AblationRequest& r = a.request;
  r.jobs = a.jobs;
  // Under --mpi, enough runs at once to keep every worker's slots busy.
  if (!r.jobs && mpi_measurement_slots() > 0) r.jobs = static_cast<size_t>(2 * mpi_measurement_slots());
  r.progress = !a.quiet;
  r.command_line = invocation();
  handle_interrupts("\nkmcts ablate: stopping after the work in flight (Ctrl-C again to quit now)\n",
                    &request_ablation_stop);
  if (a.replay_only) {
    const AblationOutcome o = replay_ablation(r);
    fmt::print("{} runs: {} reproduced, {} differ, {} missed a recorded external, {} unfinished\n", o.total, o.reproduced,
               o.differ, o.missed, o.unfinished);
    return o.ok() ? 0 : 1;
  }
  const AblationOutcome o = run_ablation(r);
  fmt::print("{} runs: {} done, {} failed, {} unfinished; index {}\n", o.total, o.done, o.failed, o.unfinished,
             (o.out / "index.sqlite").string());
  if (o.unfinished + o.failed > 0) fmt::print("run the same command again to finish the grid\n");
  if (const std::string warning = replay_miss_warning(o.replay_misses); !warning.empty())
    fmt::print("warning: {}\n", warning);
  return o.ok() ? 0 : 1;
}

}  // namespace

Command add_ablate(CLI::App& root) {
  auto a = std::make_shared<AblateArgs>();
  CLI::App* cmd = root.add_subcommand(
      "ablate", "Run an ablation grid (configs x problems x seeds), resumable, with measurements and LLM replies recorded once");
  cmd->add_option("GRID", a->request.grid_file, "Grid file (see configs/ablations/)")->required();
  cmd->add_option("--out", a->request.out, "Ablation folder (runs, index.sqlite); the same --out resumes (default ablations/<grid name>)");
  cmd->add_option("--jobs", a->jobs, "Runs at once (default: 1 when runs measure for real, else the hardware threads)")
      ->check(CLI::Range(1, 4096));
  cmd->add_flag("--replay-only", a->replay_only,
                "Re-run every finished run offline from its own recorded measurements and LLM replies, and check its graph");
  cmd->add_flag("--quiet", a->quiet, "No progress on stderr");
  add_mpi_options(cmd, a->mpi);
  return [a] { return with_mpi(a->mpi, [&] { return run_ablate(*a); }); };
}

}  // namespace kmcts::app
