// kmcts-cpu-worker JOB.json: checks a candidate kernel against the reference and times
// both, then prints one JSON line on stdout (the job format: cpu_evaluator.cpp, job_json):
//   {"verdict": "ok" | "wrong_answer" | "compile_error" | "infra_error",
//    "message": "one line", "details": {...},             // mismatch: output/input, first_bad_index,
//                                                          // expected, got, max_abs_err, rule, phase, trial
//    "reference_samples_ns": [...], "candidate_samples_ns": [...],   // ok only, in timing order
//    "counters": {"samples_reference", "warmup_calls_candidate", "stop_reason", ...}}  // ok only
// Neither kernel runs in this process: each runs in a host forked from it (cpu_host.hpp) before
// it draws anything, which keeps only its own shared buffers; this process checks every output
// on its own copies and holds the hosts' reported times to the timing bound ("rejected",
// rule timing_bound). A host that dies is a "crash" (the candidate's) or an infra_error (the
// reference's); hangs print nothing: the parent's timeout kills the whole group.
#include <fstream>
#include <new>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/rng.hpp"
#include "hardware/worker/job.hpp"
#include "hardware/worker/report.hpp"
#include "hardware/worker/tensors.hpp"
#include "hardware/cpu/worker/timing.hpp"

namespace kmcts::worker {
namespace {

using nlohmann::json;

/// Both kernels' hosts, each with its own arena: inputs copied in, outputs written there.
struct Hosts {
  Hosts(const Job& job)
      : reference_arena(SharedArena::bytes_for({&job.inputs, &job.outputs}, job.timing.input_sets + 2)),
        candidate_arena(SharedArena::bytes_for({&job.inputs, &job.outputs}, job.timing.input_sets + 2)),
        reference(false, job.reference, job, reference_arena, {&candidate_arena}),
        candidate(true, job.candidate, job, candidate_arena, {&reference_arena}) {}
  SharedArena reference_arena, candidate_arena;  // first: the hosts fork with both mapped
  CpuHost reference, candidate;
};

/// Fresh random inputs each trial, cycling through the distributions; the reference and the
/// candidate each get their own copy of the pristine inputs, in their own host's arena.
json check_correctness(const Job& job, Hosts& h) {
  TensorSet pristine(job.inputs);
  TensorSet ref_in(job.inputs, &h.reference_arena), expected(job.outputs, &h.reference_arena);
  TensorSet cand_in(job.inputs, &h.candidate_arena), got(job.outputs, &h.candidate_arena);
  for (int trial = 0; trial < job.correctness_trials; ++trial) {
    fill_inputs(pristine, job.inputs, job.input_seed, kCorrectnessStream, trial);
    json where = {{"trial", trial}, {"distribution", distributions_of(job, trial)}};
    ref_in.copy_from(pristine);
    poison(expected);
    h.reference.call(ref_in, expected, "correctness");
    if (auto m = find_modified_input(pristine, ref_in, job.inputs))
      return verdict("infra_error", "the reference modifies its inputs: " + m->message);
    cand_in.copy_from(pristine);
    poison(got);
    h.candidate.call(cand_in, got, "correctness");
    if (auto m = find_modified_input(pristine, cand_in, job.inputs)) return wrong(*m, "correctness", where);
    if (auto m = compare_outputs(expected, got, job.outputs, job.atol, job.rtol)) return wrong(*m, "correctness", where);
  }
  return nullptr;
}

/// After timing: the inputs must still be intact, and each set's last candidate outputs
/// must match the reference's (catches kernels that are correct first and skip work later).
/// Then new values in the same buffers (catches caching results by input address).
json recheck_after_timing(const Job& job, Hosts& h, std::vector<TimingSet>& sets) {
  TensorSet scratch(job.inputs);
  for (size_t s = 0; s < sets.size(); ++s) {
    json where = {{"input_set", s}, {"distribution", distributions_of(job, static_cast<int>(s))}};
    fill_inputs(scratch, job.inputs, job.input_seed, kTimingStream, static_cast<int>(s));
    if (auto m = find_modified_input(scratch, sets[s].reference_in, job.inputs))
      return verdict("infra_error", "the reference modified its inputs during timing: " + m->message);
    if (auto m = find_modified_input(scratch, sets[s].candidate_in, job.inputs)) return wrong(*m, "timing", where);
    if (auto m = compare_outputs(sets[s].reference_out, sets[s].candidate_out, job.outputs, job.atol, job.rtol)) {
      m->message = "during timing: " + m->message;
      return wrong(*m, "timing", where);
    }
  }
  TimingSet& set = sets.front();
  fill_inputs(scratch, job.inputs, job.input_seed, kFreshStream, 0);
  set.reference_in.copy_from(scratch);
  poison(set.reference_out);
  h.reference.call(set.reference_in, set.reference_out, "fresh_inputs");
  set.candidate_in.copy_from(scratch);
  poison(set.candidate_out);
  h.candidate.call(set.candidate_in, set.candidate_out, "fresh_inputs");
  json where = {{"input_set", 0}, {"distribution", distributions_of(job, 0)}};
  if (auto m = find_modified_input(scratch, set.candidate_in, job.inputs)) return wrong(*m, "fresh_inputs", where);
  if (auto m = compare_outputs(set.reference_out, set.candidate_out, job.outputs, job.atol, job.rtol)) {
    m->message = "new values in the same input buffers: " + m->message + " (stale or cached output?)";
    return wrong(*m, "fresh_inputs", where);
  }
  return nullptr;
}

json run_job(const std::string& job_path) {
  std::ifstream in(job_path);
  if (!in) return verdict("infra_error", "worker: cannot read job file '" + job_path + "'");
  const Job job = Job::from_json(json::parse(in));

  Hosts& h = *new Hosts(job);  // never destroyed: the process ends by _Exit (report.hpp)
  if (!h.reference.ready()) return verdict("infra_error", "reference " + h.reference.load_error());
  if (!h.candidate.ready()) return verdict("compile_error", "candidate " + h.candidate.load_error());

  if (json failure = check_correctness(job, h); !failure.is_null()) return failure;

  std::vector<TimingSet> sets;
  sets.reserve(static_cast<size_t>(job.timing.input_sets));
  for (int s = 0; s < job.timing.input_sets; ++s) {
    sets.emplace_back(job, h.reference_arena, h.candidate_arena);
    fill_inputs(sets.back().reference_in, job.inputs, job.input_seed, kTimingStream, s);
    sets.back().candidate_in.copy_from(sets.back().reference_in);
  }
  TimingOutcome timing = time_interleaved(h.reference, h.candidate, sets, job.timing);
  if (json failure = recheck_after_timing(job, h, sets); !failure.is_null()) {
    failure["details"]["counters"] = timing.counters;
    return failure;
  }
  json result = verdict("ok", "");
  timing.counters["correctness_trials"] = job.correctness_trials;
  result["counters"] = timing.counters;
  result["reference_samples_ns"] = std::move(timing.reference_ns);
  result["candidate_samples_ns"] = std::move(timing.candidate_ns);
  return result;
}

}  // namespace
}  // namespace kmcts::worker

int main(int argc, char** argv) {
  using kmcts::worker::verdict;
  const kmcts::worker::ResultChannel channel;  // before anything can print
  nlohmann::json result;
  if (argc != 2) {
    result = verdict("infra_error", "usage: kmcts-cpu-worker JOB.json");
  } else {
    try {
      result = kmcts::worker::run_job(argv[1]);
    } catch (const kmcts::worker::BoundRejected& r) {
      result = verdict("rejected", std::string("rejected: ") + r.what(), {{"rule", "timing_bound"}});
    } catch (const kmcts::worker::HostFailure& f) {
      // The kernel's own process died (a segfault in its code, an exit) or broke the protocol.
      result = kmcts::worker::host_failure_verdict(f);
    } catch (const std::bad_alloc&) {
      result = verdict("infra_error", "worker: out of memory (raise evaluator.memory_mb?)");
    } catch (const std::exception& e) {
      result = verdict("infra_error", std::string("worker: ") + e.what());
    }
  }
  channel.send_and_exit(result, argc == 2 ? 0 : 2);
}
