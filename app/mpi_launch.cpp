#include "app/mpi_launch.hpp"

#include <fmt/format.h>

#include "app/interrupts.hpp"
#include "campaigns/run_pool.hpp"
#include "core/error.hpp"
#include "hardware/remote/cluster.hpp"
#include "hardware/remote/mpi_transport.hpp"
#include "hardware/remote/remote_evaluator.hpp"
#include "hardware/remote/worker.hpp"
#include "search/coordinator.hpp"

namespace kmcts::app {

namespace {

remote::Cluster* g_cluster = nullptr;

// Every search of the process stops now and stays resumable; no new one starts.
void suspend_everything() {
  Coordinator::request_suspend();
  request_pool_stop();
}

// SIGTERM (mpirun ending the job, a scheduler's time limit): suspend, and fail the jobs at
// the workers now rather than wait for workers that are being killed too.
void stop_everything() {
  suspend_everything();
  remote::Cluster::abandon();
}

}  // namespace

void add_mpi_options(CLI::App* cmd, MpiArgs& a) {
  auto* g = cmd->add_option_group("MPI", "Scale-out: launch every rank with the same command (mpirun, srun)");
  remote::ClusterSettings& s = a.settings;
  g->add_flag("--mpi", a.on,
              "Search on MPI rank 0 and evaluate on the other ranks, one per GPU (or per --mpi-cpu-slots on hosts "
              "without GPUs); every rank runs this same command");
  g->add_option("--mpi-heartbeat", s.heartbeat_s, "Seconds between a worker's heartbeats")->capture_default_str()
      ->check(CLI::Range(0.05, 3600.0));
  g->add_option("--mpi-worker-timeout", s.worker_timeout_s,
                "Seconds of silence after which a worker (a killed node) is lost and its jobs go to the others")
      ->capture_default_str()->check(CLI::Range(0.5, 86400.0));
  g->add_option("--mpi-startup-timeout", s.startup_timeout_s,
                "Seconds rank 0 waits for every worker's hello; it goes on with those that came")
      ->capture_default_str()->check(CLI::Range(1.0, 86400.0));
  g->add_option("--mpi-max-message-mb", s.max_message_mb,
                "Largest message a rank accepts (sources, logs, samples, problem files); a larger one is rejected "
                "with an error naming its sender")->capture_default_str()->check(CLI::Range(1, 2047));
  g->add_option("--mpi-build-ahead", s.build_ahead,
                "Jobs each measurement slot holds beyond the one it measures, so the next candidates build on the "
                "worker's CPUs while its GPU is busy")->capture_default_str()->check(CLI::Range(0, 64));
  g->add_option("--mpi-max-attempts", s.max_attempts,
                "A job whose worker was lost this many times is recorded as an infra error instead of sent again")
      ->capture_default_str()->check(CLI::Range(1, 100));
  g->add_option("--mpi-cpu-slots", s.cpu_slots, "Measurements at once on a worker without GPUs (CPU problems)")
      ->capture_default_str()->check(CLI::Range(1, 1024));
  g->add_option("--mpi-stats", s.stats_file,
                "Write the cluster's figures here as JSON at the end (evaluations per minute, how busy each "
                "worker's slots were)");
}

int with_mpi(const MpiArgs& a, const std::function<int()>& command) {
  if (!a.on) return command();
  remote::MpiSession session(nullptr, nullptr);
  if (session.size() < 2)
    throw InputError("--mpi needs two ranks or more (rank 0 searches, the others evaluate): launch it with "
                     "`mpirun -np N kmcts ...` or `srun kmcts ...`");
  if (session.rank() != 0) {
    const int code = remote::run_worker(a.settings, KMCTS_VERSION, session.rank());
    if (code != 0) session.finalize_within(5, code);  // rank 0 is gone: it never finalizes
    return code;
  }
  on_sigterm(&stop_everything);
  int code = 0;
  bool complete = false;
  try {
    remote::Cluster cluster(a.settings, session.size(), KMCTS_VERSION, [](const std::string&) { suspend_everything(); });
    remote::place_evaluations_on(cluster);
    g_cluster = &cluster;
    struct Unplace {
      ~Unplace() {
        set_evaluator_placement({});
        g_cluster = nullptr;
      }
    } unplace;
    code = command();
    complete = cluster.complete();
  } catch (const std::exception& e) {
    // main's words and codes, here: MPI_Finalize below may not return if a rank is gone.
    fmt::print(stderr, "kmcts: {}: {}\n", dynamic_cast<const InputError*>(&e) ? "error" : "run failed", e.what());
    code = dynamic_cast<const InputError*>(&e) ? 2 : 1;
  }
  if (!complete) session.finalize_within(10, code);  // a rank that is gone never finalizes
  return code;
}

int mpi_measurement_slots() { return g_cluster ? g_cluster->slots() : 0; }

}  // namespace kmcts::app
