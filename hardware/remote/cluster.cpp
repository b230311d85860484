#include "hardware/remote/cluster.hpp"

#include <set>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/files.hpp"
#include "hardware/remote/cluster_state.hpp"

namespace kmcts::remote {

using json = nlohmann::json;

Cluster::Cluster(ClusterSettings settings, int world_size, std::string version,
                 std::function<void(const std::string&)> on_all_lost)
    : state_(std::make_unique<State>(std::move(settings), world_size, std::move(version), std::move(on_all_lost))) {
  State& s = *state_;
  s.thread = std::thread([&s] { s.run(); });
  std::unique_lock lock(s.mutex);
  if (!s.changed.wait_for(lock, std::chrono::duration<double>(s.settings.startup_timeout_s), [&s] { return s.welcomes_sent; })) {
    s.started = true;  // go on with the workers that came; a later hello is turned away
    s.changed.wait(lock, [&s] { return s.welcomes_sent; });
  }
  int ready = 0;
  for (const auto& [rank, w] : s.workers) ready += w.welcomed ? 1 : 0;
  lock.unlock();
  if (ready == 0) {
    s.stop();
    throw RunError(fmt::format("--mpi: no worker rank said hello within {} s (--mpi-startup-timeout) out of {}",
                               s.settings.startup_timeout_s, s.world_size - 1));
  }
  fmt::print(stderr, "kmcts: MPI: {}\n", s.summary_line());
}

Cluster::~Cluster() {
  State& s = *state_;
  s.stop();
  if (!s.settings.stats_file.empty()) {
    try {
      write_file_atomic(s.settings.stats_file, figures().dump(2) + "\n");
    } catch (const std::exception& e) {
      fmt::print(stderr, "kmcts: MPI: cannot write --mpi-stats: {}\n", e.what());
    }
  }
  fmt::print(stderr, "kmcts: MPI: {}\n", s.figures_line());
}

std::future<EvalResult> Cluster::submit(std::shared_ptr<const ProblemBundle> problem, std::string source) {
  return state_->submit(std::move(problem), std::move(source));
}

const ClusterSettings& Cluster::settings() const { return state_->settings; }

bool Cluster::complete() const {
  std::lock_guard lock(state_->mutex);
  if (state_->hellos < state_->world_size - 1) return false;
  for (const auto& [rank, w] : state_->workers)
    if (w.lost) return false;
  return true;
}

void Cluster::abandon() { State::abandoned().store(true); }

namespace {
// A count summed over the workers in use (at least 1: a pool of 0 would stall a search).
int over_workers(const std::map<int, WorkerInfo>& workers, int WorkerInfo::*count) {
  int n = 0;
  for (const auto& [rank, w] : workers)
    if (w.welcomed && !w.lost) n += w.*count;
  return std::max(1, n);
}
}  // namespace

int Cluster::slots() const {
  std::lock_guard lock(state_->mutex);
  return over_workers(state_->workers, &WorkerInfo::slots);
}

int Cluster::capacity() const {
  std::lock_guard lock(state_->mutex);
  return over_workers(state_->workers, &WorkerInfo::credits_total);
}

json Cluster::figures() const { return state_->describe(); }

json Cluster::placement() const {
  std::lock_guard lock(state_->mutex);
  std::set<std::string> hosts;
  int slots = 0;
  for (const auto& [rank, w] : state_->workers)
    if (w.welcomed) hosts.insert(w.hello["host"].get<std::string>()), slots += w.slots;
  return {{"hosts", hosts}, {"slots", slots}};
}

}  // namespace kmcts::remote
