#include "hardware/worker/tensors.hpp"

#include "hardware/worker/shared_arena.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <system_error>
#include <thread>

#include <fmt/format.h>

#include "core/rng.hpp"
#include "hardware/worker/compare_rule.hpp"
#include "hardware/worker/distributions.hpp"
#include "core/cpus.hpp"

namespace kmcts::worker {
namespace {

using nlohmann::json;

constexpr size_t kAlignment = 64;

size_t element_size(int32_t dtype) { return dtype == KMCTS_F64 ? 8 : 4; }

double element(const kmcts_tensor& t, int64_t i) {
  if (t.dtype == KMCTS_F64) return static_cast<const double*>(t.data)[i];
  return static_cast<double>(static_cast<const float*>(t.data)[i]);
}

bool is_poison(const kmcts_tensor& t, int64_t i) {
  if (t.dtype == KMCTS_F64) {
    uint64_t bits;
    std::memcpy(&bits, static_cast<const double*>(t.data) + i, sizeof bits);
    return bits == kPoisonF64;
  }
  uint32_t bits;
  std::memcpy(&bits, static_cast<const float*>(t.data) + i, sizeof bits);
  return bits == kPoisonF32;
}

json coordinates(const std::vector<int64_t>& shape, int64_t flat) {
  std::vector<int64_t> coords(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    coords[d] = flat % shape[d];
    flat /= shape[d];
  }
  return coords;
}

std::string describe(double x) { return fmt::format("{:.9g}", x); }

}  // namespace

void TensorSet::Free::operator()(std::byte* p) const {
  if (owned) std::free(p);
}

TensorSet::TensorSet(const std::vector<TensorDesc>& descs, SharedArena* arena) {
  for (const auto& d : descs) {
    size_t bytes = static_cast<size_t>(d.numel) * element_size(d.dtype);
    size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
    auto* raw = arena ? arena->take(rounded) : static_cast<std::byte*>(std::aligned_alloc(kAlignment, rounded));
    if (!raw) throw std::bad_alloc();
    buffers_.emplace_back(raw, Free{arena == nullptr});
    bytes_.push_back(bytes);
    kmcts_tensor view{};
    view.data = raw;
    view.dtype = d.dtype;
    view.ndim = static_cast<int32_t>(d.shape.size());
    for (size_t k = 0; k < d.shape.size(); ++k) view.shape[k] = d.shape[k];
    view.numel = d.numel;
    views_.push_back(view);
  }
}

void TensorSet::copy_from(const TensorSet& other) {
  for (size_t i = 0; i < buffers_.size(); ++i) std::memcpy(data(i), other.data(i), bytes_[i]);
}

const std::string& distribution_for(const TensorDesc& input, int round) {
  return input.distributions[static_cast<size_t>(round) % input.distributions.size()];
}

uint64_t fill_key(uint64_t stream, int round, size_t input) {
  return mix64(stream ^ mix64(static_cast<uint64_t>(round) * 1000003u + input));
}

Distribution fill_distribution(const TensorDesc& input, int round) {
  const std::string& name = distribution_for(input, round);
  if (auto d = parse_distribution(name)) return *d;
  throw std::invalid_argument("input '" + input.name + "': unknown distribution '" + name + "'");
}

void fill_inputs(TensorSet& inputs, const std::vector<TensorDesc>& descs, uint64_t seed, uint64_t stream, int round) {
  // Blocks of kFillBlock elements, each with its own counter stream (distributions.hpp), so
  // large tensors fill on every core with the same values whatever the thread count.
  struct Job {
    const kmcts_tensor* view;
    Distribution distribution;
    uint64_t key;
    int64_t block;
  };
  std::vector<Job> jobs;
  for (size_t i = 0; i < descs.size(); ++i) {
    const kmcts_tensor& v = inputs.view(i);
    const Distribution d = fill_distribution(descs[i], round);
    for (int64_t b = 0; b * kFillBlock < v.numel; ++b) jobs.push_back({&v, d, fill_key(stream, round, i), b});
  }
  auto fill_block = [seed](const Job& job) {
    // Sequential draws within a block: the same values as fill_value(), element by element.
    CounterRng rng(seed, job.block == 0 ? job.key : mix64(job.key ^ mix64(static_cast<uint64_t>(job.block))));
    const kmcts_tensor& v = *job.view;
    const int64_t end = std::min(v.numel, (job.block + 1) * kFillBlock);
    for (int64_t k = job.block * kFillBlock; k < end; ++k) {
      const double x = draw(job.distribution, rng);
      if (v.dtype == KMCTS_F64)
        static_cast<double*>(v.data)[k] = x;
      else
        static_cast<float*>(v.data)[k] = static_cast<float>(x);
    }
  };
  const size_t threads = std::min<size_t>({jobs.size(), static_cast<size_t>(usable_cpus()), 32});
  if (threads <= 1) {
    for (const Job& job : jobs) fill_block(job);
    return;
  }
  std::atomic<size_t> next{0};
  const auto work = [&] {
    for (size_t j = next++; j < jobs.size(); j = next++) fill_block(jobs[j]);
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {  // no more threads (RLIMIT_NPROC spent by a candidate): fewer helpers
      break;
    }
  }
  work();  // this thread too: the blocks are filled whatever the helpers it got
  for (auto& th : pool) th.join();
}

void poison(TensorSet& outputs) {
  for (int32_t i = 0; i < outputs.count(); ++i) {
    const kmcts_tensor& v = outputs.view(static_cast<size_t>(i));
    if (v.dtype == KMCTS_F64)
      std::fill_n(static_cast<uint64_t*>(v.data), v.numel, kPoisonF64);
    else
      std::fill_n(static_cast<uint32_t*>(v.data), v.numel, kPoisonF32);
  }
}

std::optional<Mismatch> output_mismatch(const TensorDesc& desc, const OutputSummary& summary, double expected,
                                        double got, bool got_poison, double atol, double rtol) {
  const int64_t bad = summary.failing_index(atol, rtol);
  if (bad < 0) return std::nullopt;
  const double x = expected, y = got;
  const bool scale_rule = summary.first_bad < 0;
  const std::string rule = scale_rule ? "scale" : std::isfinite(x) && std::isfinite(y) ? "allclose" : "nonfinite";
  Mismatch m;
  m.details = {{"output", desc.name},
               {"first_bad_index", bad},
               {"first_bad_coords", coordinates(desc.shape, bad)},
               {"expected", json_number(x)},
               {"got", json_number(y)},
               {"max_abs_err", summary.max_abs},
               {"max_rel_err", summary.max_rel},
               {"rule", rule},
               {"atol", atol},
               {"rtol", rtol},
               {"unwritten_elements", summary.unwritten}};
  if (scale_rule) {
    const double allowed = std::max(atol, rtol) * summary.scale;
    m.details["max_abs_ref"] = summary.scale;
    m.message = fmt::format(
        "output '{}': max |error| {} exceeds {} x max |reference| = {} (worst at element {}: expected {}, got {})",
        desc.name, describe(summary.max_abs), describe(std::max(atol, rtol)), describe(allowed), bad, describe(x),
        describe(y));
  } else if (got_poison && !std::isnan(x)) {
    m.message = fmt::format("output '{}' element {} was never written (NaN poison left; {} of {} elements unwritten)",
                            desc.name, bad, summary.unwritten, desc.numel);
  } else {
    m.message = fmt::format("output '{}' element {}: expected {}, got {} (max abs err {}, max rel err {})", desc.name,
                            bad, describe(x), describe(y), describe(summary.max_abs), describe(summary.max_rel));
  }
  return m;
}

std::optional<Mismatch> compare_outputs(const TensorSet& expected, const TensorSet& got,
                                        const std::vector<TensorDesc>& descs, double atol, double rtol) {
  for (size_t o = 0; o < descs.size(); ++o) {
    const kmcts_tensor& e = expected.view(o);
    const kmcts_tensor& g = got.view(o);
    OutputSummary summary;
    for (int64_t i = 0; i < e.numel; ++i) summary.add(i, element(e, i), element(g, i), is_poison(g, i), atol, rtol);
    const int64_t bad = summary.failing_index(atol, rtol);
    if (bad < 0) continue;
    return output_mismatch(descs[o], summary, element(e, bad), element(g, bad), is_poison(g, bad), atol, rtol);
  }
  return std::nullopt;
}

Mismatch modified_input_mismatch(const TensorDesc& desc, int64_t first, double before, double after) {
  Mismatch m;
  m.message = fmt::format("input '{}' was modified by the candidate (element {}: {} became {}); inputs are read-only",
                          desc.name, first, describe(before), describe(after));
  m.details = {{"input", desc.name},
               {"first_bad_index", first},
               {"first_bad_coords", coordinates(desc.shape, first)},
               {"expected", json_number(before)},
               {"got", json_number(after)},
               {"rule", "input_modified"}};
  return m;
}

std::optional<Mismatch> find_modified_input(const TensorSet& pristine, const TensorSet& now,
                                            const std::vector<TensorDesc>& descs) {
  for (size_t i = 0; i < descs.size(); ++i) {
    if (std::memcmp(pristine.data(i), now.data(i), pristine.bytes(i)) == 0) continue;
    const size_t width = element_size(descs[i].dtype);
    int64_t first = 0;
    while (std::memcmp(pristine.data(i) + static_cast<size_t>(first) * width,
                       now.data(i) + static_cast<size_t>(first) * width, width) == 0)
      ++first;
    return modified_input_mismatch(descs[i], first, element(pristine.view(i), first), element(now.view(i), first));
  }
  return std::nullopt;
}

json json_number(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return x;
}

}  // namespace kmcts::worker
