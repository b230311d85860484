#include "hardware/measure_settings.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

// ---- Options shared by the worker-based evaluators (cpu, cuda) ----
KMCTS_OPTION("evaluator.timeout_s", Double, 60.0, 0.1, 86400.0,
             "Wall-clock limit of one worker run (correctness + timing), seconds; the worker is killed after it")
KMCTS_OPTION("evaluator.memory_mb", Int, 4096, 64.0, 4194304.0,
             "Memory limit of a worker and of a compiler, MiB: address space (RLIMIT_AS) for compilers and cpu "
             "workers, resident memory for CUDA workers (a CUDA process reserves terabytes of address space)")
KMCTS_OPTION("evaluator.compile_timeout_s", Double, 120.0, 1.0, 3600.0, "Wall-clock limit of one compile, seconds")
KMCTS_OPTION("evaluator.correctness_trials", Int, 5, 1.0, 1000.0,
             "Correctness trials, each on fresh random inputs, cycling through each input's distributions")
KMCTS_OPTION("evaluator.rse_target", Double, 0.005, 1e-5, 1.0,
             "Stop timing when the relative standard error of both medians is at most this")
KMCTS_OPTION("evaluator.min_samples", Int, 20, 5.0, 1e6, "Fewest timed samples per kernel before stopping")
KMCTS_OPTION("evaluator.max_samples", Int, 2000, 5.0, 1e7, "Most timed samples per kernel")
KMCTS_OPTION("evaluator.min_time_ms", Double, 50.0, 0.0, 1e6,
             "Fewest milliseconds of timed kernel time per kernel before stopping")
KMCTS_OPTION("evaluator.max_time_ms", Double, 2000.0, 1.0, 1e7,
             "Wall-clock budget of the timing loop (flushes included), milliseconds")
KMCTS_OPTION("evaluator.warmup_calls", Int, 3, 0.0, 1e6, "Untimed calls per kernel before timing (at least)")
KMCTS_OPTION("evaluator.warmup_ms", Double, 20.0, 0.0, 1e6, "Untimed warm-up per kernel, milliseconds (at least; CUDA: at least 50, as the GPU clock ramps up from idle)")
KMCTS_OPTION("evaluator.input_sets", Int, 2, 2.0, 64.0, "Input sets rotated during timing")
KMCTS_OPTION("evaluator.cache_dir", String, "", std::nullopt, std::nullopt,
             "Compile cache folder; empty = $XDG_CACHE_HOME/kmcts or ~/.cache/kmcts")
KMCTS_OPTION("evaluator.input_seed", Int, 0, 0.0, 9007199254740992.0, "Seed of the random inputs (2^53 max)")

namespace kmcts {

using nlohmann::json;

MeasureSettings MeasureSettings::from_config(const Config& c) {
  MeasureSettings s;
  s.timeout_s = c.get_double("evaluator.timeout_s");
  s.memory_mb = c.get_int("evaluator.memory_mb");
  s.compile_timeout_s = c.get_double("evaluator.compile_timeout_s");
  s.correctness_trials = static_cast<int>(c.get_int("evaluator.correctness_trials"));
  worker::TimingPlan& t = s.timing;
  t.rse_target = c.get_double("evaluator.rse_target");
  t.min_samples = static_cast<int>(c.get_int("evaluator.min_samples"));
  t.max_samples = static_cast<int>(c.get_int("evaluator.max_samples"));
  t.min_time_ms = c.get_double("evaluator.min_time_ms");
  t.max_time_ms = c.get_double("evaluator.max_time_ms");
  t.warmup_calls = static_cast<int>(c.get_int("evaluator.warmup_calls"));
  t.warmup_ms = c.get_double("evaluator.warmup_ms");
  t.flush_mb = 0;  // the cpu evaluator's own option sets it
  t.input_sets = static_cast<int>(c.get_int("evaluator.input_sets"));
  s.cache_dir = c.get_string("evaluator.cache_dir");
  s.input_seed = c.get_int("evaluator.input_seed");
  if (t.max_samples < t.min_samples)
    throw InputError(fmt::format("evaluator.max_samples ({}) must be >= evaluator.min_samples ({})", t.max_samples,
                                 t.min_samples));
  return s;
}

namespace {

json tensor_json(const TensorSpec& t, bool input) {
  json j = {{"name", t.name}, {"dtype", t.dtype}, {"shape", t.shape}};
  if (input) j["distributions"] = t.distributions;
  return j;
}

}  // namespace

json worker_job_json(const Problem& problem, const MeasureSettings& s, const std::string& reference_so,
                     const std::string& candidate_so) {
  json inputs = json::array(), outputs = json::array();
  for (const auto& t : problem.inputs) inputs.push_back(tensor_json(t, true));
  for (const auto& t : problem.outputs) outputs.push_back(tensor_json(t, false));
  return {{"reference", reference_so},
          {"candidate", candidate_so},
          {"inputs", inputs},
          {"outputs", outputs},
          {"atol", problem.atol},
          {"rtol", problem.rtol},
          {"correctness_trials", s.correctness_trials},
          {"input_seed", static_cast<uint64_t>(s.input_seed)},
          {"timing", worker::to_json(s.timing)}};
}

}  // namespace kmcts
