// The dispatcher of Cluster (cluster_state.hpp): one thread, the only one that calls MPI.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "hardware/remote/cluster_state.hpp"

namespace kmcts::remote {

using json = nlohmann::json;

std::future<EvalResult> Cluster::State::submit(std::shared_ptr<const ProblemBundle> problem, std::string source) {
  auto job = std::make_shared<RemoteJob>();
  job->problem = std::move(problem);
  job->source = std::move(source);
  auto future = job->promise.get_future();
  std::lock_guard lock(mutex);
  if (all_lost || stopping) {
    job->promise.set_exception(std::make_exception_ptr(ClusterLost("no MPI worker is left to run the job")));
    return future;
  }
  job->id = next_id++;
  queue.push_back(std::move(job));
  return future;
}

void Cluster::State::run() {
  double last_check = 0, last_beat = 0;
  while (true) {
    bool busy = false;
    // At most so many messages a round: a rank flooding rank 0 must not starve the rest.
    for (int n = 0; n < 256; ++n) {
      auto received = transport.poll();
      if (!received) break;
      busy = true;
      std::lock_guard lock(mutex);
      try {
        if (auto* m = std::get_if<Message>(&*received)) {
          handle(*m);
        } else {
          const auto& e = std::get<MessageError>(*received);
          if (auto it = workers.find(e.source); it != workers.end()) it->second.rejected_messages++;
          fmt::print(stderr, "kmcts: MPI: {}\n", e.what());
        }
      } catch (const std::exception& e) {  // a message that passed the checks and still did not fit
        fmt::print(stderr, "kmcts: MPI: a message could not be handled: {}\n", e.what());
      }
    }
    {
      std::lock_guard lock(mutex);
      if (stopping) break;
      if (abandoned().load() && !all_lost) {
        all_lost = true;
        fail_all("kmcts is stopping (SIGTERM): the job goes back to the run, which is resumable");
      }
      if (!welcomes_sent && (hellos >= world_size - 1 || started)) welcome_all();
      if (welcomes_sent) assign();
      if (now() - last_check >= 0.1) check_silence(), last_check = now();
      if (welcomes_sent && now() - last_beat >= settings.heartbeat_s) {
        for (auto& [rank, w] : workers)
          if (w.welcomed && !w.lost) send_to(rank, Tag::heartbeat, json::object());
        last_beat = now();
      }
    }
    transport.progress();
    if (!busy) std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  say_goodbye();
}

bool Cluster::State::send_to(int rank, Tag tag, const json& body) {
  try {
    transport.send(rank, tag, body);
    return true;
  } catch (const std::exception& e) {
    fmt::print(stderr, "kmcts: MPI: a '{}' message to rank {} could not be sent: {}\n", tag_name(static_cast<int>(tag)),
               rank, e.what());
    return false;
  }
}

std::atomic<bool>& Cluster::State::abandoned() {
  static std::atomic<bool> flag{false};
  return flag;
}

void Cluster::State::handle(Message& m) {
  if (m.tag == Tag::hello) return on_hello(m);
  auto it = workers.find(m.source);
  if (it == workers.end() || !it->second.welcomed || it->second.lost) {
    fmt::print(stderr, "kmcts: MPI: a '{}' message from rank {}, which is not a worker in use: ignored\n",
               tag_name(static_cast<int>(m.tag)), m.source);
    return;
  }
  WorkerInfo& w = it->second;
  w.last_seen = now();
  switch (m.tag) {
    case Tag::result: return on_result(w, m);
    case Tag::failure: return on_failure(w, m);
    case Tag::heartbeat: return;
    default:
      w.rejected_messages++;
      fmt::print(stderr, "kmcts: MPI: rank {} sent a '{}' message, which only rank 0 sends: ignored\n", m.source,
                 tag_name(static_cast<int>(m.tag)));
  }
}

void Cluster::State::on_hello(const Message& m) {
  const json& h = m.body;
  if (auto it = workers.find(m.source); it != workers.end() && it->second.welcomed && !it->second.lost) {
    lose(it->second, "said hello again (restarted?)");
    return;
  }
  if (workers.count(m.source) || welcomes_sent || m.source == 0) {
    fmt::print(stderr, "kmcts: MPI: a hello from rank {} came late or twice: the rank is not used\n", m.source);
    send_to(m.source, Tag::stop, json::object());
    return;
  }
  hellos++;
  changed.notify_all();
  if (h["version"] != version) {
    fmt::print(stderr, "kmcts: MPI: rank {} on {} runs kmcts {}, rank 0 runs {}: the rank is not used\n", m.source,
               h["host"].get<std::string>(), h["version"].get<std::string>(), version);
    send_to(m.source, Tag::stop, json::object());
    return;
  }
  WorkerInfo& w = workers[m.source];
  w.rank = m.source;
  w.hello = h;
  w.last_seen = now();
}

std::vector<int> Cluster::State::devices_for(const WorkerInfo& w) const {
  const int gpus = w.hello["gpus"].get<int>();
  std::vector<int> group;  // the workers on its host that see the same GPUs (by PCI id), by rank
  for (const auto& [rank, o] : workers)
    if (o.hello["host"] == w.hello["host"] && o.hello["gpu_ids"] == w.hello["gpu_ids"]) group.push_back(rank);
  const int k = static_cast<int>(group.size());
  const int j = static_cast<int>(std::find(group.begin(), group.end(), w.rank) - group.begin());
  std::vector<int> mine;
  for (int d = j * gpus / k; d < (j + 1) * gpus / k; ++d) mine.push_back(d);
  return mine;
}

void Cluster::State::welcome_all() {
  welcomes_sent = true;
  for (auto& [rank, w] : workers) {
    w.devices = devices_for(w);
    const int gpus = w.hello["gpus"].get<int>();
    if (gpus > 0 && w.devices.empty()) {
      fmt::print(stderr, "kmcts: MPI: host {} has more workers than its {} GPU(s); rank {} has none of its own and is "
                 "not used\n", w.hello["host"].get<std::string>(), gpus, rank);
      w.lost = true;
      send_to(rank, Tag::stop, json::object());
      continue;
    }
    w.slots = gpus > 0 ? static_cast<int>(w.devices.size()) : settings.cpu_slots;
    w.credits = w.credits_total = w.slots * (1 + settings.build_ahead);
    w.welcomed = true;
    w.last_seen = now();
    send_to(rank, Tag::welcome, {{"heartbeat_s", settings.heartbeat_s}, {"timeout_s", settings.worker_timeout_s},
                                 {"devices", w.devices}, {"slots", w.slots}});
  }
  changed.notify_all();
}

void Cluster::State::assign() {
  while (!queue.empty()) {
    auto& job = queue.front();
    json message{{"id", job->id}, {"key", job->problem->key}, {"source", job->source}};
    if (encode(message).size() > settings.max_message_bytes()) {  // runs nowhere: the source is the culprit
      EvalResult r;
      r.message = fmt::format("the source ({} bytes) is too large to send to a worker (--mpi-max-message-mb)", job->source.size());
      job->promise.set_value(std::move(r));
      queue.pop_front();
      continue;
    }
    WorkerInfo* best = nullptr;
    for (auto& [rank, w] : workers) {
      if (!w.welcomed || w.lost || w.credits <= 0) continue;
      // The most free room first; among equals, a worker that already holds the problem.
      if (!best || w.credits > best->credits ||
          (w.credits == best->credits && w.problems.count(job->problem->key) && !best->problems.count(job->problem->key)))
        best = &w;
    }
    if (!best) return;
    try {
      if (!best->problems.count(job->problem->key)) {
        transport.send(best->rank, Tag::problem, job->problem->message);
        best->problems.insert(job->problem->key);
      }
      transport.send(best->rank, Tag::job, message);
    } catch (const std::exception& e) {  // MPI could not send to it: that worker is gone
      lose(*best, fmt::format("could not be sent a job ({})", e.what()));
      continue;  // the job is still first in the queue
    }
    best->credits--;
    best->running[job->id] = job;
    queue.pop_front();
  }
}

void Cluster::State::on_result(WorkerInfo& w, const Message& m) {
  const uint64_t id = m.body["id"].get<uint64_t>();
  auto it = w.running.find(id);
  if (it == w.running.end()) {
    w.rejected_messages++;
    fmt::print(stderr, "kmcts: MPI: rank {} sent a result for job {}, which it does not hold: rejected\n", w.rank, id);
    return;
  }
  auto job = it->second;
  w.running.erase(it);
  w.credits++;
  try {
    EvalResult r = eval_result_from_json(m.body["result"]);
    r.details["mpi"] = {{"rank", w.rank}, {"host", w.hello["host"]}, {"device", m.body["device"]}};
    w.done++;
    w.busy_s += m.body["busy_s"].get<double>();
    evaluations++;
    job->promise.set_value(std::move(r));
  } catch (const std::exception& e) {
    w.rejected_messages++;
    fmt::print(stderr, "kmcts: MPI: rank {} sent a result for job {} that is not a result ({}): rejected, the job goes "
               "to another worker\n", w.rank, id, e.what());
    requeue(job, "a malformed result");
  }
}

void Cluster::State::on_failure(WorkerInfo& w, const Message& m) {
  const uint64_t id = m.body["id"].get<uint64_t>();
  auto it = w.running.find(id);
  if (it == w.running.end()) return;
  auto job = it->second;
  w.running.erase(it);
  w.credits++;
  EvalResult r;  // infra_error: the worker could not run it (its problem did not load, ...)
  r.message = fmt::format("MPI worker rank {}: {}", w.rank, m.body["message"].get<std::string>());
  job->promise.set_value(std::move(r));
}

void Cluster::State::check_silence() {
  const double t = now();
  for (auto& [rank, w] : workers)
    if (w.welcomed && !w.lost && t - w.last_seen > settings.worker_timeout_s)
      lose(w, fmt::format("silent for {:.1f} s (--mpi-worker-timeout)", t - w.last_seen));
}

void Cluster::State::lose(WorkerInfo& w, const std::string& why) {
  w.lost = true;
  send_to(w.rank, Tag::stop, json::object());  // one that was only slow stops working for nothing
  transport.abandon_sends_to(w.rank);
  fmt::print(stderr, "kmcts: MPI: worker rank {} on {} {}: lost; its {} job(s) go to the other workers\n", w.rank,
             w.hello["host"].get<std::string>(), why, w.running.size());
  bool any = false;
  for (const auto& [rank, o] : workers) any = any || (o.welcomed && !o.lost);
  if (!any) {
    const std::string reason = "every MPI worker was lost (the last: rank " + std::to_string(w.rank) + ", " + why + ")";
    all_lost = true;
    fmt::print(stderr, "kmcts: MPI: {}\n", reason);
    // First: the searches must not take the failures below as results.
    if (on_all_lost) on_all_lost(reason);
    fail_all(reason);
    return;
  }
  for (auto& [id, job] : w.running) requeue(job, fmt::format("worker rank {} was lost", w.rank));
  w.running.clear();
}

void Cluster::State::requeue(std::shared_ptr<RemoteJob> job, const std::string& why) {
  if (++job->attempts >= settings.max_attempts) {
    EvalResult r;
    r.message = fmt::format("the job was sent {} times and never came back ({}; --mpi-max-attempts)", job->attempts, why);
    job->promise.set_value(std::move(r));
    return;
  }
  queue.push_front(std::move(job));
}

void Cluster::State::fail_all(const std::string& why) {
  auto lost = std::make_exception_ptr(ClusterLost(why));
  for (auto& job : queue) job->promise.set_exception(lost);
  queue.clear();
  for (auto& [rank, w] : workers) {
    for (auto& [id, job] : w.running) job->promise.set_exception(lost);
    w.running.clear();
  }
}

void Cluster::State::stop() {
  {
    std::lock_guard lock(mutex);
    if (stopping) return;
    stopping = true;
    started = true;
    fail_all("kmcts is stopping");
  }
  if (thread.joinable()) thread.join();
}

void Cluster::State::say_goodbye() {
  // Lost workers too: one that was only slow (or confused) must not wait for a stop forever.
  for (auto& [rank, w] : workers) send_to(rank, Tag::stop, json::object());
  // A worker that is gone never takes its stop: wait a little, not forever.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (transport.progress() > 0 && std::chrono::steady_clock::now() < until) {
    while (transport.poll()) {}  // late results and heartbeats: nobody waits for them now
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

json Cluster::State::describe() {
  std::lock_guard lock(mutex);
  const double wall = now();
  json list = json::array();
  int slots = 0;
  double busy = 0;
  for (const auto& [rank, w] : workers) {
    if (!w.welcomed) continue;
    slots += w.slots;
    busy += w.busy_s;
    list.push_back({{"rank", rank}, {"host", w.hello["host"]}, {"pid", w.hello["pid"]}, {"devices", w.devices},
                    {"slots", w.slots}, {"evaluations", w.done}, {"busy_s", w.busy_s}, {"lost", w.lost},
                    {"busy_fraction", wall > 0 && w.slots > 0 ? w.busy_s / (wall * w.slots) : 0.0},
                    {"rejected_messages", w.rejected_messages}});
  }
  return {{"workers", list}, {"slots", slots}, {"evaluations", evaluations}, {"wall_s", wall},
          {"evaluations_per_minute", wall > 0 ? 60.0 * evaluations / wall : 0.0},
          {"busy_fraction", wall > 0 && slots > 0 ? busy / (wall * slots) : 0.0}};
}

std::string Cluster::State::summary_line() {
  std::vector<std::string> parts;
  int slots = 0;
  for (const auto& [rank, w] : workers) {
    if (!w.welcomed) continue;
    slots += w.slots;
    parts.push_back(w.devices.empty() ? fmt::format("rank {} on {} pid {}: CPU x{}", rank, w.hello["host"].get<std::string>(),
                                                    w.hello["pid"].get<uint64_t>(), w.slots)
                                      : fmt::format("rank {} on {} pid {}: GPU {}", rank, w.hello["host"].get<std::string>(),
                                                    w.hello["pid"].get<uint64_t>(), fmt::join(w.devices, ",")));
  }
  return fmt::format("{} worker(s), {} measurement slot(s) ({})", parts.size(), slots, fmt::join(parts, "; "));
}

std::string Cluster::State::figures_line() {
  json d = describe();
  return fmt::format("{} evaluations in {:.0f} s ({:.1f} per minute), measurement slots busy {:.0f}% of the time",
                     d["evaluations"].get<int>(), d["wall_s"].get<double>(), d["evaluations_per_minute"].get<double>(),
                     100 * d["busy_fraction"].get<double>());
}

}  // namespace kmcts::remote
