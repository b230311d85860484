#include "hardware/cpu/worker/timing.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "core/eval_result.hpp"
#include "hardware/worker/stop_rule.hpp"

namespace kmcts::worker {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

// Samples per kernel per block. Short blocks track drift closely; more than one sample
// per block keeps the alternation from being a strict ping-pong that could phase-lock
// with periodic noise (timer ticks, a neighbour's duty cycle).
constexpr int kBlockSamples = 4;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

/// Evicts the kernels' data from the caches before each timed sample, so every sample is
/// a cold call like the first call in a real pipeline, and a kernel cannot win by keeping
/// its working set in the last-level cache between samples. Writes (not reads) so lines
/// are owned by this core; the value changes each time so no layer can skip the store.
class CacheFlusher {
 public:
  explicit CacheFlusher(int64_t megabytes) : buffer_(static_cast<size_t>(megabytes) << 20) {}
  void flush() {
    if (buffer_.empty()) return;
    std::memset(buffer_.data(), ++value_, buffer_.size());
    asm volatile("" : : "r"(buffer_.data()) : "memory");  // the stores must happen
  }

 private:
  std::vector<unsigned char> buffer_;
  unsigned char value_ = 0;
};

// Buffers up to this size also get evicted line by line (clflush), which empties the
// shared L3 too, however large it is; beyond it the per-line cost (~16k lines per MiB)
// would rival the kernels' own time, and such kernels evict most of their data themselves.
constexpr size_t kLineFlushMaxBytes = size_t{64} << 20;
constexpr size_t kCacheLine = 64;

/// Evicts [data, data + bytes) from every cache level of every core, where the ISA allows.
void evict_lines(const std::byte* data, size_t bytes) {
#if defined(__x86_64__) || defined(__i386__)
  for (size_t offset = 0; offset < bytes; offset += kCacheLine) _mm_clflush(data + offset);
  _mm_mfence();
#elif defined(__aarch64__)
  for (size_t offset = 0; offset < bytes; offset += kCacheLine) asm volatile("dc civac, %0" : : "r"(data + offset) : "memory");
  asm volatile("dsb ish" : : : "memory");
#else
  (void)data, (void)bytes;  // the flush buffer alone has to do
#endif
}

void evict_set(TensorSet& inputs, TensorSet& outputs) {
  size_t total = 0;
  for (int32_t i = 0; i < inputs.count(); ++i) total += inputs.bytes(static_cast<size_t>(i));
  for (int32_t i = 0; i < outputs.count(); ++i) total += outputs.bytes(static_cast<size_t>(i));
  if (total > kLineFlushMaxBytes) return;
  for (int32_t i = 0; i < inputs.count(); ++i)
    evict_lines(inputs.data(static_cast<size_t>(i)), inputs.bytes(static_cast<size_t>(i)));
  for (int32_t i = 0; i < outputs.count(); ++i)
    evict_lines(outputs.data(static_cast<size_t>(i)), outputs.bytes(static_cast<size_t>(i)));
}

struct Side {
  CpuHost& host;
  bool is_reference;
  std::vector<double> samples;
  double kernel_ms = 0;
  int warmup_calls = 0;

  TensorSet& inputs(TimingSet& set) const { return is_reference ? set.reference_in : set.candidate_in; }
  TensorSet& outputs(TimingSet& set) const { return is_reference ? set.reference_out : set.candidate_out; }
  double call(TimingSet& set, const char* phase) const { return host.call(inputs(set), outputs(set), phase); }
};

void warm_up(Side& side, std::vector<TimingSet>& sets, const TimingPlan& plan) {
  const auto start = Clock::now();
  while (side.warmup_calls < plan.warmup_calls || ms_since(start) < plan.warmup_ms)
    side.call(sets[static_cast<size_t>(side.warmup_calls++) % sets.size()], "warmup");
}

void timed_sample(Side& side, std::vector<TimingSet>& sets, CacheFlusher& flusher) {
  TimingSet& set = sets[side.samples.size() % sets.size()];
  poison(side.outputs(set));
  flusher.flush();
  evict_set(side.inputs(set), side.outputs(set));
  const double ns = side.call(set, "timing");  // the host's clock, around the call alone
  side.samples.push_back(ns);
  side.kernel_ms += ns * 1e-6;
}

}  // namespace

TimingOutcome time_interleaved(CpuHost& reference, CpuHost& candidate, std::vector<TimingSet>& sets,
                               const TimingPlan& plan) {
  Side ref{reference, true, {}, 0, 0};
  Side cand{candidate, false, {}, 0, 0};
  json bound = json::object();
  CacheFlusher flusher(plan.flush_mb);
  flusher.flush();  // first touch commits the pages now, not inside the first sample
  warm_up(ref, sets, plan);
  warm_up(cand, sets, plan);

  const size_t max_samples = static_cast<size_t>(plan.max_samples);
  const auto start = Clock::now();
  std::string stop_reason;
  int blocks = 0;
  while (stop_reason.empty()) {
    Side* order[2] = {&ref, &cand};
    if (blocks % 2 == 1) std::swap(order[0], order[1]);  // neither kernel always goes first
    for (Side* side : order)
      for (int j = 0; j < kBlockSamples && side->samples.size() < max_samples; ++j) timed_sample(*side, sets, flusher);
    ++blocks;
    if (auto breach = check_totals(reference.timed(), candidate.timed(), TimingBoundPolicy::cpu(), &bound))
      throw BoundRejected(*breach);

    stop_reason = worker::stop_reason(
        {&ref.samples, &cand.samples, ref.kernel_ms, cand.kernel_ms, sets.size(), ms_since(start), plan.min_time_ms}, plan);
  }

  TimingOutcome outcome;
  outcome.counters = {{"stop_reason", stop_reason},
                      {"blocks", blocks},
                      {"block_samples", kBlockSamples},
                      {"samples_reference", ref.samples.size()},
                      {"samples_candidate", cand.samples.size()},
                      {"warmup_calls_reference", ref.warmup_calls},
                      {"warmup_calls_candidate", cand.warmup_calls},
                      {"kernel_ms_reference", ref.kernel_ms},
                      {"kernel_ms_candidate", cand.kernel_ms},
                      {"timing_wall_ms", ms_since(start)},
                      {"rse_reference", TimingStats::from_samples(ref.samples).rse_median},
                      {"rse_candidate", TimingStats::from_samples(cand.samples).rse_median},
                      {"flush_mb", plan.flush_mb},
                      {"line_flush_max_bytes", kLineFlushMaxBytes},
                      {"input_sets", sets.size()},
                      {"timing_bound", bound}};
  outcome.reference_ns = std::move(ref.samples);
  outcome.candidate_ns = std::move(cand.samples);
  return outcome;
}

}  // namespace kmcts::worker
