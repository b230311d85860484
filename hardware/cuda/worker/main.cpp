// kmcts-cuda-worker JOB.json: checks a CUDA candidate against the reference and times both
// on one GPU, then prints one JSON line on stdout (the job: cuda_evaluator.cpp, job_json):
//   {"verdict": "ok" | "wrong_answer" | "rejected" | "crash" | "compile_error" | "infra_error",
//    "message": "one line", "details": {...},  // mismatch: output, first_bad_index, expected, got,
//                                               // rule, phase; rejected: rule, phase
//    "reference_samples_ns": [...], "candidate_samples_ns": [...],  // ok only, CUPTI union times
//    "counters": {...}, "events": {...}, "device": {...}, "candidate_kernels": [...]}
// Neither kernel runs in this process: each runs in a kmcts-cuda-host of its own (session.hpp),
// whose reports this process checks against its own clocks. A CUDA error inside the
// candidate's call, or its host dying, is a "crash" (the context is unusable after sticky
// errors, so the worker exits); hangs print nothing: the parent's timeout kills it.

#include <algorithm>
#include <chrono>
#include <fstream>
#include <new>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/eval_result.hpp"
#include "core/rng.hpp"
#include "hardware/cuda/worker/device.hpp"
#include "hardware/cuda/worker/gpu_timing.hpp"
#include "hardware/cuda/worker/session.hpp"
#include "hardware/worker/job.hpp"
#include "hardware/worker/report.hpp"
#include "hardware/worker/tensors.hpp"

namespace kmcts::worker {
namespace {

using nlohmann::json;

/// A T that is never destroyed. The worker's context, stream and device buffers must outlive
/// the verdict: a candidate may leave a host thread behind that still launches on them, and
/// freeing them under it crashed the worker (tests/cuda_cheats/host_thread.cu), turning a
/// wrong answer into a crash. The process ends by std::_Exit right after the verdict is sent
/// (report.hpp), so nothing is lost.
template <class T, class... Args>
T& kept(Args&&... args) {
  return *new T(std::forward<Args>(args)...);
}

/// Draws `set`'s inputs for (stream, round) on the GPU into its pristine copy.
void draw_inputs(Session& s, const Job& job, GpuSet& set, uint64_t stream, int round) {
  s.checks().fill(set.pristine, job.inputs, job.input_seed, stream, round);
}

/// Runs the reference on `set`'s inputs (restored from its pristine copy) into set.expected;
/// a reference that modifies its inputs is an infra error.
std::optional<json> reference_outputs(Session& s, const Job& job, GpuSet& set) {
  s.checks().copy(set.inputs, set.pristine);
  s.checks().poison(set.outputs);
  // Into the shared outputs, then copied here: the expected outputs lie in the set's own
  // arena, which is never exported to a host (an exported arena's neighbours can be opened by
  // a guessed IPC handle).
  s.call(false, set.inputs, set.outputs, "reference");
  s.checks().copy(set.expected, set.outputs);
  if (auto m = s.checks().modified_input(set.pristine, set.inputs, job.inputs))
    return verdict("infra_error", "the reference modifies its inputs: " + m->message);
  return std::nullopt;
}

/// The candidate on `set`'s inputs (restored from pristine): inputs unmodified and outputs
/// equal to set.expected, or the mismatch.
std::optional<Mismatch> check_candidate(Session& s, const Job& job, GpuSet& set, const std::string& phase) {
  s.checks().copy(set.inputs, set.pristine);
  s.checks().poison(set.outputs);
  s.call(true, set.inputs, set.outputs, phase);
  if (auto m = s.checks().modified_input(set.pristine, set.inputs, job.inputs)) return m;
  return s.checks().compare(set.expected, set.outputs, job.outputs, job.atol, job.rtol);
}

json check_correctness(Session& s, const Job& job) {
  GpuSet& set = kept<GpuSet>(job);
  for (int trial = 0; trial < job.correctness_trials; ++trial) {
    draw_inputs(s, job, set, kCorrectnessStream, trial);
    if (auto failure = reference_outputs(s, job, set)) return *failure;
    if (auto m = check_candidate(s, job, set, "correctness"))
      return wrong(*m, "correctness", {{"trial", trial}, {"distribution", distributions_of(job, trial)}});
  }
  return nullptr;
}

/// After timing (whose every call's outputs were checked): each set's inputs intact; then new
/// values in the same buffers (catches results cached by input address).
json recheck_after_timing(Session& s, const Job& job, std::vector<GpuSet>& sets) {
  for (size_t k = 0; k < sets.size(); ++k) {
    json where = {{"input_set", k}, {"distribution", distributions_of(job, static_cast<int>(k))}};
    if (auto m = s.checks().modified_input(sets[k].pristine, sets[k].inputs, job.inputs))
      return wrong(*m, "timing", where);
  }
  GpuSet& set = sets.front();
  draw_inputs(s, job, set, kFreshStream, 0);
  if (auto failure = reference_outputs(s, job, set)) return *failure;
  if (auto m = check_candidate(s, job, set, "fresh_inputs")) {
    m->message = "new values in the same input buffers: " + m->message + " (stale or cached output?)";
    return wrong(*m, "fresh_inputs", {{"input_set", 0}});
  }
  return nullptr;
}

/// CUDA events around single calls on the launch stream, tracing off: the cross-check of the
/// CUPTI times (events also count launch overhead, and miss work off the launch stream).
json event_cross_check(Session& s, std::vector<GpuSet>& sets, L2Flusher& flusher) {
  s.pause_tracing();
  std::vector<double> ref, cand;
  for (int k = 0; k < s.plan().event_samples; ++k) {
    GpuSet& set = sets[static_cast<size_t>(k) % sets.size()];
    for (bool candidate : {false, true}) {
      s.checks().poison(set.outputs);
      flusher.flush(s.stream());
      (candidate ? cand : ref).push_back(s.event_ns(candidate, set.inputs, set.outputs));
    }
  }
  if (ref.empty()) return json::object();
  return {{"samples", ref.size()},
          {"reference_median_ns", TimingStats::from_samples(ref).median_ns},
          {"candidate_median_ns", TimingStats::from_samples(cand).median_ns}};
}

/// KernelBench's timing loop (REFERENCE.md), for protocol comparisons: no CUPTI, no
/// interleaving, one kernel after the other.
std::vector<double> kernelbench_times(Session& s, GpuSet& set, bool candidate, L2Flusher& fill) {
  DeviceTensors& out = set.outputs;
  for (int w = 0; w < 3; ++w) s.event_ns(candidate, set.inputs, out);
  std::vector<double> times;
  for (int t = 0; t < 101; ++t) {
    fill.flush(s.stream());
    const double ns = s.event_ns(candidate, set.inputs, out);
    if (t > 0) times.push_back(ns);
  }
  return times;
}

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point start) { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); }

json run_job(const std::string& job_path) {
  std::ifstream in(job_path);
  if (!in) return verdict("infra_error", "worker: cannot read job file '" + job_path + "'");
  const json j = json::parse(in);
  const Job job = Job::from_json(j);
  const CudaPlan plan = CudaPlan::from_json(j.at("cuda"));
  auto phase_start = Clock::now();
  json phases = json::object();
  auto phase_done = [&](const char* name) {
    phases[name] = ms_since(phase_start);
    phase_start = Clock::now();
  };
  set_under_profiler(plan.protocol == "profile");  // before its hosts start
  Session& session = kept<Session>(job, plan);
  if (plan.protocol == "profile") {
    // One candidate call on fresh inputs for the profiler; correctness was checked by the
    // measurement this accompanies.
    GpuSet& set = kept<GpuSet>(job);
    draw_inputs(session, job, set, kTimingStream, 0);
    session.checks().copy(set.inputs, set.pristine);
    session.call(true, set.inputs, set.outputs, "profile");
    // Its host ends in order (its requests closed, it exits), not killed under the profiler.
    json done = verdict("ok", "profiled");
    done["hosts_ended"] = session.finish_hosts(10.0);
    return done;
  }
  L2Flusher flusher(plan.device, plan.flush_bytes);
  SmClock clock(plan.device);
  phase_done("startup_ms");

  if (json failure = check_correctness(session, job); !failure.is_null()) return failure;
  phase_done("correctness_ms");

  if (plan.protocol == "kernelbench") {
    session.pause_tracing();
    GpuSet& set = kept<GpuSet>(job);
    draw_inputs(session, job, set, kTimingStream, 0);
    session.checks().copy(set.inputs, set.pristine);
    L2Flusher fill(plan.device, size_t{256} << 20);
    json result = verdict("ok", "");
    result["reference_samples_ns"] = kernelbench_times(session, set, false, fill);
    result["candidate_samples_ns"] = kernelbench_times(session, set, true, fill);
    phase_done("timing_ms");
    result["counters"] = {{"protocol", "kernelbench"}, {"phases", phases}};
    result["device"] = session.device_json();
    return result;
  }

  std::vector<GpuSet>& sets = kept<std::vector<GpuSet>>();
  sets.reserve(static_cast<size_t>(job.timing.input_sets));  // the hosts bind sets by address
  for (int k = 0; k < job.timing.input_sets; ++k) {
    sets.emplace_back(job);
    draw_inputs(session, job, sets.back(), kTimingStream, k);
    if (auto failure = reference_outputs(session, job, sets.back())) return *failure;
    session.checks().copy(sets.back().inputs, sets.back().pristine);
  }
  phase_done("input_sets_ms");
  GpuTimingOutcome timing = time_gpu(session, sets, job, flusher, clock);
  phase_done("timing_ms");
  if (timing.timed_failure) {
    json failure = wrong(*timing.timed_failure, "timing");
    failure["details"]["counters"] = timing.counters;
    return failure;
  }
  if (json failure = recheck_after_timing(session, job, sets); !failure.is_null()) return failure;
  phase_done("recheck_ms");
  json events = event_cross_check(session, sets, flusher);
  phase_done("events_ms");

  json result = verdict("ok", "");
  timing.counters["correctness_trials"] = job.correctness_trials;
  timing.counters["sm_clock_readable"] = clock.available();
  timing.counters["protocol"] = "kmcts";
  timing.counters["phases"] = phases;
  result["counters"] = timing.counters;
  result["events"] = events;
  result["device"] = session.device_json();
  result["candidate_kernels"] = session.candidate_kernels();
  result["kernel_tables"] = std::move(timing.kernel_tables);
  result["details"]["trace"] = session.last_trace();
  if (kHip) {  // timed afterwards from rocprofv3's traces, which the hosts write as they exit
    result["windows"] = session.windows();
    result["host_pids"] = session.host_pids();  // before finish_hosts(), which forgets them
    result["hosts_ended"] = session.finish_hosts(10.0);
  }
  result["reference_samples_ns"] = std::move(timing.reference_ns);
  result["candidate_samples_ns"] = std::move(timing.candidate_ns);
  return result;
}

}  // namespace
}  // namespace kmcts::worker

int main(int argc, char** argv) {
  using namespace kmcts::worker;
  const kmcts::worker::ResultChannel channel;  // before anything can print
  nlohmann::json result;
  int code = 0;
  if (argc != 2) {
    result = verdict("infra_error", fmt::format("usage: {} JOB.json", kWorkerBinary)), code = 2;
  } else {
    try {
      result = run_job(argv[1]);
    } catch (const Rejected& r) {
      result = verdict("rejected", "rejected: " + r.violation.message,
                       {{"rule", r.violation.rule}, {"phase", r.phase}, {"trace", r.trace}});
    } catch (const CallFault& f) {
      // Errors such as an illegal address are sticky: this process is done either way.
      result = f.candidate ? verdict("crash", fmt::format("crash: {} error in the candidate ({}): {}", kGpuApi, f.phase, f.what()),
                                     {{"phase", f.phase}, {"cuda_error", f.what()}})
                           : verdict("infra_error", fmt::format("the reference failed ({}): {}", f.phase, f.what()));
      code = 3;
    } catch (const HostFailure& f) {
      // The kernel's own process died (a segfault in its code, a kill) or broke the protocol.
      result = host_failure_verdict(f);
      code = 3;
    } catch (const LoadError& e) {
      result = verdict(e.candidate ? "compile_error" : "infra_error", e.what());
    } catch (const CudaFault& e) {
      result = verdict("infra_error", fmt::format("worker: {}: {}", kGpuApi, e.what())), code = 3;
    } catch (const std::bad_alloc&) {
      result = verdict("infra_error", "worker: out of host memory (raise evaluator.memory_mb?)");
    } catch (const std::exception& e) {
      result = verdict("infra_error", std::string("worker: ") + e.what());
    }
  }
  channel.send_and_exit(result, code);
}
