#pragma once
// Cluster's insides (cluster.cpp, cluster_state.cpp): the dispatcher thread's loop and what
// it knows of each worker. Only the dispatcher thread calls MPI; `mutex` guards the rest.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "hardware/remote/cluster.hpp"
#include "hardware/remote/mpi_transport.hpp"

namespace kmcts::remote {

struct RemoteJob {
  uint64_t id = 0;
  std::shared_ptr<const ProblemBundle> problem;
  std::string source;
  std::promise<EvalResult> promise;
  int attempts = 0;  // workers lost while they held it
};

struct WorkerInfo {
  int rank = 0;
  nlohmann::json hello;
  std::vector<int> devices;  // the GPUs rank 0 gave it (empty: a CPU worker)
  int slots = 0, credits_total = 0, credits = 0;
  bool welcomed = false, lost = false;
  double last_seen = 0;
  std::set<std::string> problems;  // bundles it holds
  std::map<uint64_t, std::shared_ptr<RemoteJob>> running;
  int done = 0, rejected_messages = 0;
  double busy_s = 0;  // measurement time it reported
};

struct Cluster::State {
  State(ClusterSettings s, int world, std::string v, std::function<void(const std::string&)> lost)
      : settings(std::move(s)), world_size(world), version(std::move(v)), on_all_lost(std::move(lost)),
        transport(settings.max_message_bytes()), t0(std::chrono::steady_clock::now()) {}

  ClusterSettings settings;
  const int world_size;
  const std::string version;
  std::function<void(const std::string&)> on_all_lost;
  Transport transport;  // dispatcher thread only
  const std::chrono::steady_clock::time_point t0;

  std::mutex mutex;
  std::condition_variable changed;
  std::map<int, WorkerInfo> workers;
  std::deque<std::shared_ptr<RemoteJob>> queue;  // waiting for a worker
  uint64_t next_id = 1;
  int hellos = 0;
  bool started = false, welcomes_sent = false, stopping = false, all_lost = false;
  int evaluations = 0;
  std::thread thread;

  double now() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }
  std::future<EvalResult> submit(std::shared_ptr<const ProblemBundle> problem, std::string source);
  void run();   // the dispatcher thread
  void stop();  // once: fail what waits, stop the workers, join
  nlohmann::json describe();
  std::string summary_line();
  std::string figures_line();

 private:
  void handle(Message& m);
  void on_hello(const Message& m);
  void welcome_all();
  void on_result(WorkerInfo& w, const Message& m);
  void on_failure(WorkerInfo& w, const Message& m);
  void assign();
  void check_silence();
  void lose(WorkerInfo& w, const std::string& why);
  void requeue(std::shared_ptr<RemoteJob> job, const std::string& why);
  void fail_all(const std::string& why);
  void say_goodbye();
  bool send_to(int rank, Tag tag, const nlohmann::json& body);  // false (and said) when it failed

 public:
  /// Set by Cluster::abandon (a signal handler): fail every job now.
  static std::atomic<bool>& abandoned();

 private:
  std::vector<int> devices_for(const WorkerInfo& w) const;
};

}  // namespace kmcts::remote
