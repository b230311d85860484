#include "hardware/worker/job.hpp"

#include <stdexcept>

#include "kmcts_cpu.h"

namespace kmcts::worker {
namespace {

using nlohmann::json;

TensorDesc parse_tensor(const json& j) {
  TensorDesc t;
  t.name = j.at("name").get<std::string>();
  const std::string dtype = j.at("dtype").get<std::string>();
  if (dtype == "f32") t.dtype = KMCTS_F32;
  else if (dtype == "f64") t.dtype = KMCTS_F64;
  else throw std::invalid_argument("tensor '" + t.name + "': unknown dtype '" + dtype + "'");
  t.shape = j.at("shape").get<std::vector<int64_t>>();
  if (t.shape.empty() || t.shape.size() > 8) throw std::invalid_argument("tensor '" + t.name + "': bad rank");
  t.numel = 1;
  for (int64_t d : t.shape) {
    if (d <= 0) throw std::invalid_argument("tensor '" + t.name + "': bad shape");
    t.numel *= d;
  }
  t.distributions = j.value("distributions", std::vector<std::string>{});
  return t;
}

std::vector<TensorDesc> parse_tensors(const json& j) {
  std::vector<TensorDesc> out;
  for (const auto& t : j) out.push_back(parse_tensor(t));
  return out;
}

}  // namespace

TimingPlan TimingPlan::from_json(const json& t) {
  TimingPlan p;
  p.rse_target = t.at("rse_target").get<double>();
  p.min_samples = t.at("min_samples").get<int>();
  p.max_samples = t.at("max_samples").get<int>();
  p.min_time_ms = t.at("min_time_ms").get<double>();
  p.max_time_ms = t.at("max_time_ms").get<double>();
  p.warmup_calls = t.at("warmup_calls").get<int>();
  p.warmup_ms = t.at("warmup_ms").get<double>();
  p.flush_mb = t.at("flush_mb").get<int64_t>();
  p.input_sets = t.at("input_sets").get<int>();
  if (p.input_sets < 1 || p.min_samples < 1 || p.max_samples < p.min_samples)
    throw std::invalid_argument("timing plan out of range");
  return p;
}

json to_json(const TimingPlan& p) {
  return {{"rse_target", p.rse_target},   {"min_samples", p.min_samples}, {"max_samples", p.max_samples},
          {"min_time_ms", p.min_time_ms}, {"max_time_ms", p.max_time_ms}, {"warmup_calls", p.warmup_calls},
          {"warmup_ms", p.warmup_ms},     {"flush_mb", p.flush_mb},       {"input_sets", p.input_sets}};
}

Job Job::from_json(const json& j) {
  Job job;
  job.reference = j.at("reference").get<std::string>();
  job.candidate = j.at("candidate").get<std::string>();
  job.inputs = parse_tensors(j.at("inputs"));
  job.outputs = parse_tensors(j.at("outputs"));
  for (auto& t : job.inputs)
    if (t.distributions.empty()) throw std::invalid_argument("input '" + t.name + "' has no distributions");
  if (job.outputs.empty()) throw std::invalid_argument("a job needs at least one output");
  job.atol = j.at("atol").get<double>();
  job.rtol = j.at("rtol").get<double>();
  job.correctness_trials = j.at("correctness_trials").get<int>();
  job.input_seed = j.at("input_seed").get<uint64_t>();
  job.timing = TimingPlan::from_json(j.at("timing"));
  return job;
}

}  // namespace kmcts::worker
