#include <fmt/format.h>

#include "app/commands.hpp"
#include "app/interrupts.hpp"
#include "app/mpi_launch.hpp"
#include "core/error.hpp"
#include "core/options.hpp"
#include "search/coordinator.hpp"
#include "search/resume.hpp"
#include "search/run_search.hpp"
#include "search/summary_table.hpp"

namespace kmcts::app {
namespace {

struct RunArgs {
  std::string problem_dir;
  std::string config_file;
  std::vector<std::string> sets;
  std::optional<int64_t> budget;
  std::optional<int64_t> seed;
  std::optional<int64_t> workers;
  std::optional<std::string> gpus;
  std::string out;
  bool quiet = false;
  bool deterministic = false;
  MpiArgs mpi;
};

int report(const nlohmann::json& summary) {
  fmt::print("{}", format_summary_table(summary));
  return summary.value("status", "") == "completed" ? 0 : 1;
}

// First Ctrl-C: finish in-flight work and write the summary. Second: quit at once.
void handle_interrupts() {
  app::handle_interrupts("\nkmcts: stopping after the work in flight (Ctrl-C again to quit now)\n",
                         &Coordinator::request_stop);
}

int run(const RunArgs& a) {
  Config config = a.config_file.empty() ? Config() : Config::from_file(a.config_file);
  for (const auto& s : a.sets) config.set(s);
  // The convenience flags are --set shorthands, applied last.
  if (a.budget) config.set_value("search.budget", *a.budget, "--budget");
  if (a.seed) config.set_value("search.seed", *a.seed, "--seed");
  if (a.workers) config.set_value("search.workers", *a.workers, "--workers");
  if (a.gpus) config.set_value("evaluator.cuda.gpus", *a.gpus, "--gpus");
  if (a.deterministic) config.set_value("search.deterministic", true, "--deterministic");
  if (a.mpi.on && a.gpus)
    throw InputError("--gpus does not apply with --mpi: each worker rank takes the GPUs it sees (CUDA_VISIBLE_DEVICES, "
                     "shared among the workers of a host)");
  RunRequest request{a.problem_dir, config, a.out, !a.quiet, invocation(), std::nullopt};
  return with_mpi(a.mpi, [&] {
    handle_interrupts();
    return report(run_search(request));
  });
}

}  // namespace

Command add_run(CLI::App& root) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = root.add_subcommand("run", "Search for faster variants of a problem's kernel");
  cmd->add_option("PROBLEM_DIR", args->problem_dir, "Problem folder (holds problem.json)")->required();
  cmd->add_option("--config", args->config_file, "JSON config file (see `kmcts config --explain`)");
  cmd->add_option("--set", args->sets, "Override one option: key=value (repeatable)");
  cmd->add_option("--budget", args->budget, "Evaluations to spend (search.budget)");
  cmd->add_option("--seed", args->seed, "Random seed (search.seed)");
  cmd->add_option("--workers", args->workers, "Trials in flight (search.workers)");
  cmd->add_option("--gpus", args->gpus, "CUDA devices to measure on, e.g. 0,1: one measurement per GPU at a time (evaluator.cuda.gpus)");
  cmd->add_option("--out", args->out, "Run directory to create (default runs/<problem>-<time>-s<seed>)");
  cmd->add_flag("--deterministic", args->deterministic,
                "Lockstep waves applied in request order: the same graph for any --workers (search.deterministic)");
  cmd->add_flag("--quiet", args->quiet, "No progress on stderr");
  add_mpi_options(cmd, args->mpi);
  return [args] { return run(*args); };
}

Command add_resume(CLI::App& root) {
  auto args = std::make_shared<ResumeRequest>();
  auto quiet = std::make_shared<bool>(false);
  auto mpi = std::make_shared<MpiArgs>();
  CLI::App* cmd = root.add_subcommand("resume", "Continue a run that stopped (killed, crashed, Ctrl-C'd twice) where it was");
  cmd->add_option("RUN_DIR", args->run_dir, "Run directory of the unfinished run")->required();
  cmd->add_option("--budget", args->budget, "A new evaluation budget; above a completed run's evaluations it extends that run");
  cmd->add_option("--workers", args->workers, "Trials in flight from now on");
  cmd->add_option("--set", args->sets,
                  "Raise a limit the run reached: search.max_wall_s, max_agent_calls, max_tokens or max_dollars = value "
                  "(repeatable)");
  cmd->add_flag("--quiet", *quiet, "No progress on stderr");
  add_mpi_options(cmd, *mpi);
  return [args, quiet, mpi] {
    args->progress = !*quiet;
    return with_mpi(*mpi, [&] {
      handle_interrupts();
      return report(resume_search(*args));
    });
  };
}

}  // namespace kmcts::app
