
#include <fmt/format.h>

#include "app/commands.hpp"
#include "app/interrupts.hpp"
#include "app/mpi_launch.hpp"
#include "campaigns/kb_runner.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/text.hpp"

namespace kmcts::app {
namespace {

struct KbArgs {
  KbLeaderboardRequest request;
  std::string config_file;
  std::vector<std::string> sets;
  std::string gpus = "0";
  bool quiet = false;
  bool no_hygiene = false;
  bool no_remeasure = false;
  bool no_compile_baseline = false;
  MpiArgs mpi;
};

int run_kb(KbArgs& a) {
  KbLeaderboardRequest& r = a.request;
  r.config = a.config_file.empty() ? Config() : Config::from_file(a.config_file);
  for (const auto& s : a.sets) r.config.set(s);
  r.gpus = split_list(a.gpus);
  if (const int slots = mpi_measurement_slots(); slots > 0) {
    if (a.gpus != "0" && a.gpus != "cpu")
      throw InputError("--gpus " + a.gpus + " does not apply with --mpi: each worker rank takes the GPUs it sees "
                       "(CUDA_VISIBLE_DEVICES); only --gpus cpu (the harness on the workers' CPUs) has a meaning");
    // The workers own the GPUs: one search per measurement slot of theirs at a time, each
    // search's evaluations on whichever worker is free (it puts its own GPU in the options).
    const std::string device = a.gpus == "cpu" ? "cpu" : "0";
    r.gpus.assign(static_cast<size_t>(slots), device);
    r.hygiene_device = "cpu";  // rank 0 may share a host (and a GPU) with the workers' timings
    r.mpi = true;
  }
  r.progress = !a.quiet;
  r.hygiene = !a.no_hygiene;
  r.remeasure = !a.no_remeasure;
  r.compile_baseline = !a.no_compile_baseline;
  r.command_line = invocation();
  handle_interrupts("\nkmcts kernelbench: stopping after the searches in flight (Ctrl-C again to quit now)\n",
                    &request_leaderboard_stop);
  const nlohmann::json summary = run_kernelbench_leaderboard(r);
  fmt::print("{}", read_file(r.out / "summary.md"));
  return summary.value("unfinished", nlohmann::json::array()).empty() ? 0 : 1;
}

}  // namespace

Command add_kernelbench(CLI::App& root) {
  auto a = std::make_shared<KbArgs>();
  KbLeaderboardRequest& r = a->request;
  CLI::App* cmd = root.add_subcommand(
      "kernelbench", "Leaderboard run over a KernelBench level: one search per problem, spread over the GPUs, resumable");
  cmd->add_option("--kb-root", r.kb_root, "Your KernelBench checkout (holds KernelBench/level1/...) or a folder of levelN/")
      ->required();
  cmd->add_option("--level", r.level, "KernelBench level (1, 2, 3, ...)")->required();
  cmd->add_option("--problems", r.problems, "Problems to run: numbers, ranges and names, e.g. 1-10,19,ReLU (default all)");
  cmd->add_option("--budget", r.budget, "Evaluations per problem (search.budget)");
  cmd->add_option("--gpus", a->gpus, "GPUs to spread the problems over, e.g. 0,1 (one search per GPU at a time); cpu for protocol tests");
  cmd->add_option("--mode", r.mode, "Evaluation used as the reward: hardened or faithful (KernelBench's own protocol)")
      ->capture_default_str();
  cmd->add_option("--out", r.out, "Campaign folder (runs, per-problem results, summary); the same --out resumes")->required();
  cmd->add_option("--config", a->config_file, "JSON config file for every search (see `kmcts config --explain`)");
  cmd->add_option("--set", a->sets, "Override one option of every search: key=value (repeatable)");
  cmd->add_flag("--no-hygiene", a->no_hygiene, "Skip the check for problems whose correctness check is vacuous");
  cmd->add_flag("--no-remeasure", a->no_remeasure,
                "Score each problem by its search's own measurement of the best candidate instead of one new, "
                "independent evaluation of it (biased upwards: the best of many noisy measurements)");
  cmd->add_flag("--no-compile-baseline", a->no_compile_baseline,
                "Time the reference in eager mode only: no torch.compile per problem (its build costs seconds to "
                "minutes), so fast_p and speedups are against eager alone");
  cmd->add_option("--own-share-threshold", r.own_share_threshold,
                  "fast_p_own counts only candidates whose own kernels took at least this share of their kernel time "
                  "(hardened mode on a GPU measures it)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_flag("--quiet", a->quiet, "No progress on stderr");
  add_mpi_options(cmd, a->mpi);
  return [a] { return with_mpi(a->mpi, [&] { return run_kb(*a); }); };
}

}  // namespace kmcts::app
