#include "hardware/remote/worker.hpp"

#include <unistd.h>

#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "hardware/cuda/devices.hpp"
#include "hardware/cuda/gpu_pool.hpp"
#include "hardware/remote/mpi_transport.hpp"
#include "hardware/remote/worker_evaluators.hpp"

namespace kmcts::remote {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

struct Job {
  uint64_t id;
  std::string key, source;
};

// Jobs in, messages out: the MPI thread fills one and empties the other.
struct Mailboxes {
  std::mutex mutex;
  std::condition_variable job_ready;
  std::deque<Job> jobs;
  std::deque<std::pair<Tag, json>> out;
  bool closed = false;

  void post(Tag tag, json body) {
    std::lock_guard lock(mutex);
    out.emplace_back(tag, std::move(body));
  }
};

json run_job(WorkerEvaluators& evaluators, cuda::GpuPool& gpus, const Job& job) {
  Evaluator& builder = evaluators.get(job.key, gpus.devices().front());
  BuildResult built = builder.build(job.source);  // CPU work: no GPU is held
  if (!built.ok) return {{"id", job.id}, {"result", to_json(compile_error_result(built), true)}, {"device", 0}, {"busy_s", 0.0}};
  cuda::GpuPool::Lease lease = gpus.acquire();
  const auto t0 = Clock::now();
  EvalResult result = evaluators.get(job.key, lease.device()).measure_built(built);
  const double busy = std::chrono::duration<double>(Clock::now() - t0).count();
  return {{"id", job.id}, {"result", to_json(result, true)}, {"device", lease.device()}, {"busy_s", busy}};
}

void job_thread(Mailboxes& box, WorkerEvaluators& evaluators, cuda::GpuPool& gpus) {
  while (true) {
    Job job;
    {
      std::unique_lock lock(box.mutex);
      box.job_ready.wait(lock, [&] { return box.closed || !box.jobs.empty(); });
      if (box.jobs.empty()) return;
      job = std::move(box.jobs.front());
      box.jobs.pop_front();
    }
    try {
      box.post(Tag::result, run_job(evaluators, gpus, job));
    } catch (const std::exception& e) {
      box.post(Tag::failure, {{"id", job.id}, {"message", e.what()}});
    }
  }
}

std::string host_name() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

}  // namespace

int run_worker(const ClusterSettings& settings, const std::string& version, int rank) {
  Transport transport(settings.max_message_bytes());
  // The GPUs it sees, by PCI bus id: rank 0 splits among the workers of a host only the GPUs
  // they share (mpirun), not those a launcher gave each task alone (srun --gpus-per-task).
  const json seen = cuda::probe_devices().value("devices", json::array());
  std::string gpu_ids;
  for (const auto& d : seen) {
    if (!gpu_ids.empty()) gpu_ids += ',';  // (not a + b: GCC 12 -O3 warns falsely on that, -Wrestrict)
    gpu_ids += std::to_string(d.value("pci_bus_id", -1));
  }
  transport.send(0, Tag::hello, {{"version", version}, {"host", host_name()}, {"pid", static_cast<uint64_t>(getpid())},
                                 {"gpu_ids", gpu_ids}, {"gpus", seen.size()}});
  // Until rank 0 answers: welcome (our GPUs) or stop (not needed).
  std::optional<Message> welcome;
  while (!welcome) {
    if (auto r = transport.poll()) {
      if (auto* m = std::get_if<Message>(&*r); m && m->source == 0 && (m->tag == Tag::welcome || m->tag == Tag::stop)) {
        if (m->tag == Tag::stop) return 0;
        welcome = std::move(*m);
      } else if (auto* e = std::get_if<MessageError>(&*r)) {
        fmt::print(stderr, "kmcts: MPI worker {}: {}\n", rank, e->what());
      }
    }
    transport.progress();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::vector<int> devices = welcome->body["devices"].get<std::vector<int>>();
  const bool cpu_only = devices.empty();
  const int slots = std::max(1, welcome->body["slots"].get<int>());
  if (cpu_only)
    for (int d = 0; d < slots; ++d) devices.push_back(d);  // CPU slots: numbers, not devices
  const double heartbeat_s = welcome->body["heartbeat_s"].get<double>();
  const double timeout_s = welcome->body["timeout_s"].get<double>();
  cuda::GpuPool gpus(devices);
  fs::path scratch = fs::temp_directory_path() / fmt::format("kmcts-mpi-rank{}-{}", rank, getpid());
  WorkerEvaluators evaluators(scratch, !cpu_only);
  Mailboxes box;
  std::vector<std::thread> threads;
  for (int i = 0; i < slots * (1 + settings.build_ahead); ++i)
    threads.emplace_back([&] { job_thread(box, evaluators, gpus); });

  auto last_sent = Clock::now(), last_heard = Clock::now();
  bool stop = false, orphaned = false;
  try {
  while (!stop) {
    bool busy = false;
    while (auto r = transport.poll()) {
      busy = true;
      if (auto* e = std::get_if<MessageError>(&*r)) {
        fmt::print(stderr, "kmcts: MPI worker {}: {}\n", rank, e->what());
        continue;
      }
      Message& m = std::get<Message>(*r);
      if (m.source != 0) continue;  // workers take orders from rank 0 only
      last_heard = Clock::now();
      if (m.tag == Tag::stop) {
        stop = true;
        break;
      }
      if (m.tag == Tag::problem) {
        evaluators.add_problem(m.body);
      } else if (m.tag == Tag::job) {
        std::lock_guard lock(box.mutex);
        box.jobs.push_back({m.body["id"].get<uint64_t>(), m.body["key"].get<std::string>(), m.body["source"].get<std::string>()});
        box.job_ready.notify_one();
      }
    }
    std::deque<std::pair<Tag, json>> out;
    {
      std::lock_guard lock(box.mutex);
      out.swap(box.out);
    }
    for (auto& [tag, body] : out) {
      try {
        transport.send(0, tag, body);
      } catch (const std::exception& e) {  // a result too large to send: say so instead
        transport.send(0, Tag::failure, {{"id", body.value("id", uint64_t{0})}, {"message", e.what()}});
      }
      last_sent = Clock::now();
      busy = true;
    }
    if (std::chrono::duration<double>(Clock::now() - last_sent).count() >= heartbeat_s / 2) {
      transport.send(0, Tag::heartbeat, json::object());
      last_sent = Clock::now();
    }
    // Rank 0 beats too: a worker that hears nothing (rank 0 died, the job goes on under
    // --enable-recovery) leaves instead of holding its GPU until the allocation ends.
    if (const double silent = std::chrono::duration<double>(Clock::now() - last_heard).count(); silent > timeout_s) {
      fmt::print(stderr, "kmcts: MPI worker {}: rank 0 silent for {:.1f} s: leaving\n", rank, silent);
      stop = orphaned = true;
    }
    transport.progress();
    if (!busy) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  } catch (const std::exception& e) {  // MPI failed under us: rank 0 is gone, most likely
    fmt::print(stderr, "kmcts: MPI worker {}: {}: leaving\n", rank, e.what());
    orphaned = true;
  }
  {
    std::lock_guard lock(box.mutex);
    box.closed = true;
    box.jobs.clear();
  }
  box.job_ready.notify_all();
  for (auto& t : threads) t.join();  // measurements in flight end (their evaluators' limits bound them)
  evaluators.clear();
  std::error_code ignored;
  fs::remove_all(scratch, ignored);
  return orphaned ? 1 : 0;
}

}  // namespace kmcts::remote
