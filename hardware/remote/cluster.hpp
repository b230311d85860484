#pragma once
// Rank 0's side of `--mpi`: the worker ranks as one pool of measurement slots. A thread of
// its own does all the MPI calls: it takes each worker's hello and gives it its GPUs (a
// host's GPUs are split among the workers on it that see the same ones), sends a problem's
// files to a worker once, hands a job to the worker with the most free room (a free slot
// asks for work: credits come back with results), and turns results into the futures that
// RemoteEvaluator waits on. A worker that stays silent past --mpi-worker-timeout is lost:
// its jobs go to the others; with none left, every waiting job fails and `on_all_lost` is
// called, so the command can stop and leave its runs to `kmcts resume`.
#include <functional>
#include <future>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "core/eval_result.hpp"
#include "hardware/remote/cluster_settings.hpp"
#include "hardware/remote/problem_bundle.hpp"

namespace kmcts::remote {

/// What a job's future holds when no worker is left to run it.
struct ClusterLost : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Cluster {
 public:
  /// Starts the dispatcher and waits for the workers' hellos (ranks 1 .. world_size-1).
  /// RunError when none came within --mpi-startup-timeout.
  Cluster(ClusterSettings settings, int world_size, std::string version, std::function<void(const std::string&)> on_all_lost);
  /// Fails the jobs still waiting, tells the workers to stop, writes --mpi-stats.
  ~Cluster();
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  /// Runs one evaluation (build and measure) of `source` on a worker.
  std::future<EvalResult> submit(std::shared_ptr<const ProblemBundle> problem, std::string source);
  const ClusterSettings& settings() const;
  /// Whether every rank said hello and none was lost since (else MPI_Finalize may wait
  /// forever for a rank that is gone).
  bool complete() const;
  /// Async-signal-safe (SIGTERM): every job waiting now and later fails at once, so searches
  /// suspended by the same signal are not held up by work that may never come back.
  static void abandon();
  /// Measurement slots over the workers in use (one per GPU, or --mpi-cpu-slots).
  int slots() const;
  /// Jobs the workers hold at once: measurement slots x (1 + --mpi-build-ahead).
  int capacity() const;
  /// The figures so far: per worker (rank, host, pid, devices, slots, evaluations, busy
  /// time) and in all (evaluations per minute, busy fraction of the slots).
  nlohmann::json figures() const;
  /// What does not change while the cluster runs: hosts and measurement slots.
  nlohmann::json placement() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace kmcts::remote
