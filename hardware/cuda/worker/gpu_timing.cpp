#include "hardware/cuda/worker/gpu_timing.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "core/eval_result.hpp"
#include "core/rng.hpp"
#include "hardware/worker/stop_rule.hpp"

namespace kmcts::worker {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

constexpr int kBlockSamples = 4;  // as the cpu worker: short blocks, not a strict ping-pong

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct Side {
  explicit Side(bool is_candidate) : candidate(is_candidate) {}
  bool candidate;
  std::vector<double> samples;
  double kernel_ms = 0;
  int calls = 0;  // timed calls, dropped ones included (they pick the input set)
  int dropped_low_clock = 0;
  int warmup_calls = 0;
  int kernels_per_call = 0, memcpys_per_call = 0, memsets_per_call = 0;  // of the last sample
  std::map<int, int> kernel_counts;  // kernels per timed sample -> samples (usually one entry)
  std::set<uint32_t> streams;        // every stream the timed samples' work ran on
  // Per kept sample, aligned with `samples`: its kernel count, and which stream set it ran on
  // (an index into stream_sets; one set in an honest run).
  std::vector<int> sample_kernels;
  std::vector<int> sample_stream_set;
  std::vector<std::set<uint32_t>> stream_sets;
  double window_overhead_ns = 0;  // window minus union, summed (launch + synchronisation)
  cuda::KernelTable kernels;      // per launch over the kept samples (the profile's source)

};

struct Loop {
  Session& session;
  std::vector<GpuSet>& sets;
  const Job& job;
  L2Flusher& flusher;
  const SmClock& clock;
  unsigned max_mhz = 0;
  unsigned min_kept_mhz = 0;

  /// The SM clock now, and whether a sample taken now counts.
  bool clock_ok() {
    auto mhz = clock.mhz();
    if (!mhz) return true;
    max_mhz = std::max(max_mhz, *mhz);
    const bool ok = *mhz >= session.plan().min_clock_ratio * max_mhz;
    if (ok) min_kept_mhz = min_kept_mhz ? std::min(min_kept_mhz, *mhz) : *mhz;
    return ok;
  }

  void warm_up(Side& side) {
    const auto start = Clock::now();
    while (side.warmup_calls < job.timing.warmup_calls || ms_since(start) < job.timing.warmup_ms) {
      GpuSet& set = sets[static_cast<size_t>(side.warmup_calls++) % sets.size()];
      session.call(side.candidate, set.inputs, set.outputs, "warmup");
      clock_ok();
    }
  }

  std::optional<Mismatch> sample(Side& side) {
    const size_t set_index = static_cast<size_t>(side.calls++) % sets.size();
    GpuSet& set = sets[set_index];
    DeviceTensors& out = set.outputs;
    session.checks().poison(out);
    flusher.flush(session.stream());
    const cuda::ActivitySample s = session.call(side.candidate, set.inputs, out, "timing");
    side.kernels_per_call = s.kernels, side.memcpys_per_call = s.memcpys, side.memsets_per_call = s.memsets;
    side.kernel_counts[s.kernels]++;
    side.streams.insert(s.streams.begin(), s.streams.end());
    if (clock_ok()) {
      side.samples.push_back(static_cast<double>(s.union_ns));
      side.kernel_ms += static_cast<double>(s.union_ns) * 1e-6;
      side.window_overhead_ns += static_cast<double>(s.window_ns) - static_cast<double>(s.union_ns);
      side.sample_kernels.push_back(s.kernels);
      side.kernels.merge(s.kernel_table);
      auto known = std::find(side.stream_sets.begin(), side.stream_sets.end(), s.streams);
      if (known == side.stream_sets.end()) known = side.stream_sets.insert(known, s.streams);
      side.sample_stream_set.push_back(static_cast<int>(known - side.stream_sets.begin()));
    } else {
      side.dropped_low_clock++;
    }
    return check_timed_call(side, set, set_index);
  }

  /// Every output of this timed call against the reference's first outputs on the same
  /// inputs. The reference's calls are checked too, so that both kernels' samples follow the
  /// same work; a reference whose timed outputs drift is an infra error (thrown).
  std::optional<Mismatch> check_timed_call(const Side& side, GpuSet& set, size_t set_index) {
    auto m = session.checks().compare(set.expected, set.outputs, job.outputs, job.atol, job.rtol);
    if (!m) return std::nullopt;
    m->message = fmt::format("during timing (call {} on input set {}): {}", side.calls, set_index, m->message);
    if (!side.candidate) throw std::runtime_error("the reference's outputs changed between calls, " + m->message);
    return m;
  }
};

/// {"1": 700} for 700 samples of one kernel each (JSON keys are strings).
json histogram(const std::map<int, int>& counts) {
  json h = json::object();
  for (const auto& [kernels, samples] : counts) h[std::to_string(kernels)] = samples;
  return h;
}

json side_counters(const Side& s, const char* name) {
  const double n = static_cast<double>(std::max<size_t>(1, s.samples.size()));
  return {{std::string("samples_") + name, s.samples.size()},
          {std::string("dropped_low_clock_") + name, s.dropped_low_clock},
          {std::string("warmup_calls_") + name, s.warmup_calls},
          {std::string("kernel_ms_") + name, s.kernel_ms},
          {std::string("kernels_per_call_") + name, s.kernels_per_call},
          {std::string("memcpys_per_call_") + name, s.memcpys_per_call},
          {std::string("memsets_per_call_") + name, s.memsets_per_call},
          {std::string("kernel_count_histogram_") + name, histogram(s.kernel_counts)},
          {std::string("streams_") + name, s.streams},
          {std::string("sample_kernels_") + name, s.sample_kernels},
          {std::string("sample_stream_set_") + name, s.sample_stream_set},
          {std::string("stream_sets_") + name, s.stream_sets},
          {std::string("window_overhead_ns_") + name, s.window_overhead_ns / n},
          {std::string("rse_") + name, TimingStats::from_samples(s.samples).rse_median}};
}

}  // namespace

GpuTimingOutcome time_gpu(Session& session, std::vector<GpuSet>& sets, const Job& job, L2Flusher& flusher,
                          const SmClock& clock) {
  Loop loop{session, sets, job, flusher, clock};
  Side ref(false), cand(true);
  loop.warm_up(ref);
  loop.warm_up(cand);

  GpuTimingOutcome outcome;
  const auto start = Clock::now();
  std::string stop_reason;
  int blocks = 0;
  while (stop_reason.empty()) {
    Side* order[2] = {&ref, &cand};
    if (blocks % 2 == 1) std::swap(order[0], order[1]);
    for (Side* side : order)
      for (int j = 0; j < kBlockSamples && side->calls < job.timing.max_samples * 2; ++j)
        if ((outcome.timed_failure = loop.sample(*side))) break;
    ++blocks;
    session.check_timing_bound();
    if (outcome.timed_failure) {
      stop_reason = "timed_call_wrong";
      break;
    }
    // Short kernels need more samples for a stable median (REFERENCE.md: 100 ms under 10 us).
    double min_time_ms = job.timing.min_time_ms;
    if (!ref.samples.empty() && !cand.samples.empty() &&
        std::min(TimingStats::from_samples(ref.samples).median_ns, TimingStats::from_samples(cand.samples).median_ns) <
            session.plan().short_kernel_ns)
      min_time_ms *= 2;
    stop_reason = worker::stop_reason(
        {&ref.samples, &cand.samples, ref.kernel_ms, cand.kernel_ms, sets.size(), ms_since(start), min_time_ms}, job.timing);
    // Every sample dropped for its clock for as long as the budget allows: stop anyway.
    if (stop_reason.empty() && ms_since(start) >= 2 * job.timing.max_time_ms) stop_reason = "max_time_low_clock";
  }
  outcome.counters = {{"stop_reason", stop_reason},
                      {"blocks", blocks},
                      {"block_samples", kBlockSamples},
                      {"timing_wall_ms", ms_since(start)},
                      {"flush_bytes", flusher.bytes()},
                      {"input_sets", sets.size()},
                      {"sm_clock_max_mhz", loop.max_mhz},
                      {"sm_clock_min_kept_mhz", loop.min_kept_mhz},
                      {"min_clock_ratio", session.plan().min_clock_ratio},
                      {"timing_bound", session.timing_bound_json()}};
  outcome.counters.update(side_counters(ref, "reference"));
  outcome.counters.update(side_counters(cand, "candidate"));
  outcome.kernel_tables = {{"reference", ref.kernels.to_json()},
                           {"candidate", cand.kernels.to_json()},
                           {"samples_reference", ref.samples.size()},
                           {"samples_candidate", cand.samples.size()}};
  outcome.reference_ns = std::move(ref.samples);
  outcome.candidate_ns = std::move(cand.samples);
  return outcome;
}

}  // namespace kmcts::worker
