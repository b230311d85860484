// kmcts-cpu-worker JOB.json: checks a candidate kernel against the reference and times
// both, then prints one JSON line on stdout (the job format: cpu_evaluator.cpp, job_json):
//   {"verdict": "ok" | "wrong_answer" | "compile_error" | "infra_error",
//    "message": "one line", "details": {...},             // mismatch: output/input, first_bad_index,
//                                                          // expected, got, max_abs_err, rule, phase, trial
//    "reference_samples_ns": [...], "candidate_samples_ns": [...],   // ok only, in timing order
//    "counters": {"samples_reference", "warmup_calls_candidate", "stop_reason", ...}}  // ok only
// Crashes and hangs print nothing: the parent maps the signal or its own timeout.
// It runs untrusted code in-process on purpose: the evaluator runs it in a sandboxed child,
// so a kernel that crashes or hangs takes down only this process.
#include <dlfcn.h>

#include <cstring>
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

struct Loaded {
  KernelFn fn = nullptr;
  std::string error;
};

Loaded load_kernel(const std::string& path) {
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_LOCAL | RTLD_NOW);
  if (!handle) {
    const char* why = dlerror();
    return {nullptr, std::string("cannot be loaded: ") + (why ? why : "unknown dlopen error")};
  }
  void* symbol = dlsym(handle, "kmcts_kernel");
  if (!symbol) return {nullptr, "does not export kmcts_kernel (it must be extern \"C\", as declared in kmcts_cpu.h)"};
  KernelFn fn;
  static_assert(sizeof fn == sizeof symbol);
  std::memcpy(&fn, &symbol, sizeof fn);  // object-to-function pointer without a pedantic cast
  return {fn, {}};
}

void call(KernelFn fn, TensorSet& inputs, TensorSet& outputs) {
  fn(inputs.views(), inputs.count(), outputs.views(), outputs.count());
}

/// Fresh random inputs each trial, cycling through the distributions; the reference
/// and the candidate each get their own pristine copy of the inputs.
json check_correctness(const Job& job, KernelFn ref, KernelFn cand) {
  TensorSet pristine(job.inputs), inputs(job.inputs), expected(job.outputs), got(job.outputs);
  for (int trial = 0; trial < job.correctness_trials; ++trial) {
    fill_inputs(pristine, job.inputs, job.input_seed, kCorrectnessStream, trial);
    json where = {{"trial", trial}, {"distribution", distributions_of(job, trial)}};
    inputs.copy_from(pristine);
    poison(expected);
    call(ref, inputs, expected);
    if (auto m = find_modified_input(pristine, inputs, job.inputs))
      return verdict("infra_error", "the reference modifies its inputs: " + m->message);
    inputs.copy_from(pristine);
    poison(got);
    call(cand, inputs, got);
    if (auto m = find_modified_input(pristine, inputs, job.inputs)) return wrong(*m, "correctness", where);
    if (auto m = compare_outputs(expected, got, job.outputs, job.atol, job.rtol))
      return wrong(*m, "correctness", where);
  }
  return nullptr;
}

/// After timing: the inputs must still be intact, and each set's last candidate outputs
/// must match the reference's (catches kernels that are correct first and skip work later).
/// Then new values in the same buffers (catches caching results by input address).
json recheck_after_timing(const Job& job, KernelFn ref, KernelFn cand, std::vector<TimingSet>& sets) {
  TensorSet scratch(job.inputs);
  for (size_t s = 0; s < sets.size(); ++s) {
    json where = {{"input_set", s}, {"distribution", distributions_of(job, static_cast<int>(s))}};
    fill_inputs(scratch, job.inputs, job.input_seed, kTimingStream, static_cast<int>(s));
    if (auto m = find_modified_input(scratch, sets[s].inputs, job.inputs)) return wrong(*m, "timing", where);
    if (auto m = compare_outputs(sets[s].reference_out, sets[s].candidate_out, job.outputs, job.atol, job.rtol)) {
      m->message = "during timing: " + m->message;
      return wrong(*m, "timing", where);
    }
  }
  TimingSet& set = sets.front();
  fill_inputs(set.inputs, job.inputs, job.input_seed, kFreshStream, 0);
  scratch.copy_from(set.inputs);
  poison(set.reference_out);
  call(ref, set.inputs, set.reference_out);
  set.inputs.copy_from(scratch);
  poison(set.candidate_out);
  call(cand, set.inputs, set.candidate_out);
  json where = {{"input_set", 0}, {"distribution", distributions_of(job, 0)}};
  if (auto m = find_modified_input(scratch, set.inputs, job.inputs)) return wrong(*m, "fresh_inputs", where);
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

  Loaded ref = load_kernel(job.reference);
  if (!ref.fn) return verdict("infra_error", "reference " + ref.error);
  Loaded cand = load_kernel(job.candidate);
  if (!cand.fn) return verdict("compile_error", "candidate " + cand.error);

  if (json failure = check_correctness(job, ref.fn, cand.fn); !failure.is_null()) return failure;

  std::vector<TimingSet> sets;
  for (int s = 0; s < job.timing.input_sets; ++s) {
    sets.emplace_back(job);
    fill_inputs(sets.back().inputs, job.inputs, job.input_seed, kTimingStream, s);
  }
  TimingOutcome timing = time_interleaved(ref.fn, cand.fn, sets, job.timing);
  if (json failure = recheck_after_timing(job, ref.fn, cand.fn, sets); !failure.is_null()) {
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
    } catch (const std::bad_alloc&) {
      result = verdict("infra_error", "worker: out of memory (raise evaluator.memory_mb?)");
    } catch (const std::exception& e) {
      result = verdict("infra_error", std::string("worker: ") + e.what());
    }
  }
  channel.send_and_exit(result, argc == 2 ? 0 : 2);
}
