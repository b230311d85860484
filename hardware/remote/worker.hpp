#pragma once
// A worker rank of `--mpi` (every rank but 0): says hello with the GPUs it sees, takes the
// ones rank 0 gives it, and runs jobs as a local evaluator would: the build on this host's
// CPUs (--mpi-build-ahead jobs per slot build while the GPUs measure), then the measurement on
// a free GPU of its own, both in child processes through the problem's evaluator. Results go
// back as they finish; a heartbeat goes out at least every --mpi-heartbeat.
#include <string>

#include "hardware/remote/cluster_settings.hpp"

namespace kmcts::remote {

/// Serves rank 0 until it says stop (0), or until rank 0 is silent past its timeout or MPI
/// fails (1: then MPI_Finalize may never return).
int run_worker(const ClusterSettings& settings, const std::string& version, int rank);

}  // namespace kmcts::remote
