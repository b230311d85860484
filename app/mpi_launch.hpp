#pragma once
// `--mpi` for the commands that evaluate (run, resume, kernelbench, ablate): every rank runs
// the same command line; rank 0 runs the command with its evaluations placed on the other
// ranks (hardware/remote), and every other rank serves as a worker until rank 0 is done.
#include <functional>

#include <CLI/CLI.hpp>

#include "hardware/remote/cluster_settings.hpp"

namespace kmcts::app {

struct MpiArgs {
  bool on = false;
  remote::ClusterSettings settings;
};

/// Adds --mpi and its settings (an "MPI" group) to `cmd`.
void add_mpi_options(CLI::App* cmd, MpiArgs& args);

/// Without --mpi: command(). With it: command() on rank 0 with the workers as its evaluators,
/// the worker loop elsewhere; the exit code of either.
int with_mpi(const MpiArgs& args, const std::function<int()>& command);

/// Inside with_mpi's command on rank 0: the workers' measurement slots; 0 without --mpi.
int mpi_measurement_slots();

}  // namespace kmcts::app
