#pragma once
// How rank 0 and its workers keep in touch under `--mpi`. These are launch settings, not
// search settings (they change where evaluations run, not what a run finds), so they are
// command-line options (app/mpi_launch.cpp declares them with their help) and stay out of
// run configs and ablation grids.
#include <cstddef>
#include <string>

namespace kmcts::remote {

struct ClusterSettings {
  double heartbeat_s = 2;          // a worker speaks at least this often
  double worker_timeout_s = 60;    // a worker silent this long is lost
  double startup_timeout_s = 300;  // for every worker's hello
  size_t max_message_mb = 256;     // largest message accepted
  int build_ahead = 1;             // jobs per measurement slot beyond the one being measured
  int max_attempts = 3;            // a job whose worker was lost this often becomes an infra error
  int cpu_slots = 1;               // measurement slots of a worker without GPUs
  std::string stats_file;          // JSON of the cluster's figures at the end ("" = none)

  size_t max_message_bytes() const { return max_message_mb << 20; }
};

}  // namespace kmcts::remote
