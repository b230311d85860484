#include "hardware/worker/tensors.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>

#include <fmt/format.h>

#include "core/rng.hpp"

namespace kmcts::worker {
namespace {

// Elements per independent random stream when filling inputs (see fill_inputs).
constexpr int64_t kFillBlock = 1 << 16;

using nlohmann::json;

constexpr size_t kAlignment = 64;
// Heavy-tailed draws are clipped here: 30+ standard deviations of outliers, yet sums of
// millions of them stay far from fp32 overflow.
constexpr double kHeavyTailClip = 100.0;

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

json coordinates(const kmcts_tensor& t, int64_t flat) {
  std::vector<int64_t> coords(static_cast<size_t>(t.ndim));
  for (int d = t.ndim - 1; d >= 0; --d) {
    coords[static_cast<size_t>(d)] = flat % t.shape[d];
    flat /= t.shape[d];
  }
  return coords;
}

double standard_normal(CounterRng& rng) {
  // Box-Muller; 1 - u keeps the logarithm's argument in (0, 1].
  double u1 = 1.0 - rng.uniform(), u2 = rng.uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

double draw(const std::string& distribution, CounterRng& rng) {
  if (distribution == "normal") return standard_normal(rng);
  // Strictly negative and bounded away from zero, so abs/relu/sign mistakes show.
  if (distribution == "negative") return -(0.5 + 1.5 * rng.uniform());
  if (distribution == "heavy_tailed") {
    // Student-t with 3 degrees of freedom: finite variance but polynomial tails.
    double z = standard_normal(rng);
    double chi2 = 0;
    for (int k = 0; k < 3; ++k) chi2 += std::pow(standard_normal(rng), 2);
    return std::clamp(z / std::sqrt(chi2 / 3.0 + 1e-300), -kHeavyTailClip, kHeavyTailClip);
  }
  return rng.uniform();  // "uniform": [0, 1)
}

std::string describe(double x) { return fmt::format("{:.9g}", x); }

}  // namespace

void TensorSet::Free::operator()(std::byte* p) const { std::free(p); }

TensorSet::TensorSet(const std::vector<TensorDesc>& descs) {
  for (const auto& d : descs) {
    size_t bytes = static_cast<size_t>(d.numel) * element_size(d.dtype);
    size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
    auto* raw = static_cast<std::byte*>(std::aligned_alloc(kAlignment, rounded));
    if (!raw) throw std::bad_alloc();
    buffers_.emplace_back(raw);
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

void fill_inputs(TensorSet& inputs, const std::vector<TensorDesc>& descs, uint64_t seed, uint64_t stream, int round) {
  // Blocks of kFillBlock elements, each with its own counter stream, so large tensors fill
  // on every core with the same values whatever the thread count; block 0 keeps the key a
  // whole tensor had before blocks existed, so small tensors' inputs did not change.
  struct Job {
    const kmcts_tensor* view;
    const std::string* distribution;
    uint64_t key;
    int64_t block;
  };
  std::vector<Job> jobs;
  for (size_t i = 0; i < descs.size(); ++i) {
    const uint64_t key = mix64(stream ^ mix64(static_cast<uint64_t>(round) * 1000003u + i));
    const kmcts_tensor& v = inputs.view(i);
    for (int64_t b = 0; b * kFillBlock < v.numel; ++b) jobs.push_back({&v, &distribution_for(descs[i], round), key, b});
  }
  auto fill_block = [seed](const Job& job) {
    CounterRng rng(seed, job.block == 0 ? job.key : mix64(job.key ^ mix64(static_cast<uint64_t>(job.block))));
    const kmcts_tensor& v = *job.view;
    const int64_t end = std::min(v.numel, (job.block + 1) * kFillBlock);
    for (int64_t k = job.block * kFillBlock; k < end; ++k) {
      double x = draw(*job.distribution, rng);
      if (v.dtype == KMCTS_F64)
        static_cast<double*>(v.data)[k] = x;
      else
        static_cast<float*>(v.data)[k] = static_cast<float>(x);
    }
  };
  const size_t threads = std::min<size_t>({jobs.size(), std::max(1u, std::thread::hardware_concurrency()), 32});
  if (threads <= 1) {
    for (const Job& job : jobs) fill_block(job);
    return;
  }
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  for (size_t t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      for (size_t j = next++; j < jobs.size(); j = next++) fill_block(jobs[j]);
    });
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

bool element_matches(double x, double y, double atol, double rtol) {
  if (std::isnan(x)) return std::isnan(y);
  if (std::isinf(x)) return y == x;
  if (!std::isfinite(y)) return false;
  return std::fabs(y - x) <= atol + rtol * std::fabs(x);
}

std::optional<Mismatch> compare_span(const TensorSet& expected, size_t output, int64_t offset, int64_t count,
                                     const void* got, const TensorDesc& desc, double atol, double rtol) {
  const bool f64 = desc.dtype == KMCTS_F64;
  auto at = [f64](const void* base, int64_t k) {
    return f64 ? static_cast<const double*>(base)[k] : static_cast<double>(static_cast<const float*>(base)[k]);
  };
  const std::byte* want = expected.data(output) + static_cast<size_t>(offset) * element_size(desc.dtype);
  for (int64_t k = 0; k < count; ++k) {
    const double x = at(want, k), y = at(got, k);
    if (element_matches(x, y, atol, rtol)) continue;
    const bool unwritten = std::isnan(y) && !std::isnan(x);
    Mismatch m;
    m.message = fmt::format("output '{}' element {}: expected {}, got {}{}", desc.name, offset + k, x, y,
                            unwritten ? " (not written: still the poison NaN?)" : "");
    m.details = {{"output", desc.name},
                 {"first_bad_index", offset + k},
                 {"expected", json_number(x)},
                 {"got", json_number(y)},
                 {"rule", unwritten ? "unwritten" : "allclose"}};
    return m;
  }
  return std::nullopt;
}

std::optional<Mismatch> compare_outputs(const TensorSet& expected, const TensorSet& got,
                                        const std::vector<TensorDesc>& descs, double atol, double rtol) {
  for (size_t o = 0; o < descs.size(); ++o) {
    const kmcts_tensor& e = expected.view(o);
    const kmcts_tensor& g = got.view(o);
    int64_t first_bad = -1, unwritten = 0, worst = -1;
    std::string rule;
    double max_abs = 0, max_rel = 0, scale = 0;
    for (int64_t i = 0; i < e.numel; ++i) {
      double x = element(e, i), y = element(g, i);
      if (std::isnan(y) && is_poison(g, i) && !std::isnan(x)) ++unwritten;
      const bool bad = !element_matches(x, y, atol, rtol);
      if (std::isfinite(x) && std::isfinite(y)) {
        double diff = std::fabs(y - x);
        scale = std::max(scale, std::fabs(x));
        if (diff > max_abs) max_abs = diff, worst = i;
        if (x != 0) max_rel = std::max(max_rel, diff / std::fabs(x));
      }
      if (bad && first_bad < 0) first_bad = i, rule = std::isfinite(x) && std::isfinite(y) ? "allclose" : "nonfinite";
    }
    const double allowed = std::max(atol, rtol) * scale;
    if (first_bad < 0 && max_abs > allowed) first_bad = worst, rule = "scale";
    if (first_bad < 0) continue;

    double x = element(e, first_bad), y = element(g, first_bad);
    Mismatch m;
    m.details = {{"output", descs[o].name},
                 {"first_bad_index", first_bad},
                 {"first_bad_coords", coordinates(e, first_bad)},
                 {"expected", json_number(x)},
                 {"got", json_number(y)},
                 {"max_abs_err", max_abs},
                 {"max_rel_err", max_rel},
                 {"rule", rule},
                 {"atol", atol},
                 {"rtol", rtol},
                 {"unwritten_elements", unwritten}};
    if (rule == "scale") {
      m.details["max_abs_ref"] = scale;
      m.message = fmt::format(
          "output '{}': max |error| {} exceeds {} x max |reference| = {} (worst at element {}: expected {}, got {})",
          descs[o].name, describe(max_abs), describe(std::max(atol, rtol)), describe(allowed), first_bad,
          describe(x), describe(y));
    } else if (is_poison(g, first_bad) && !std::isnan(x)) {
      m.message = fmt::format("output '{}' element {} was never written (NaN poison left; {} of {} elements unwritten)",
                              descs[o].name, first_bad, unwritten, e.numel);
    } else {
      m.message = fmt::format("output '{}' element {}: expected {}, got {} (max abs err {}, max rel err {})",
                              descs[o].name, first_bad, describe(x), describe(y), describe(max_abs),
                              describe(max_rel));
    }
    return m;
  }
  return std::nullopt;
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
    double before = element(pristine.view(i), first), after = element(now.view(i), first);
    Mismatch m;
    m.message = fmt::format("input '{}' was modified by the candidate (element {}: {} became {}); inputs are read-only",
                            descs[i].name, first, describe(before), describe(after));
    m.details = {{"input", descs[i].name},
                 {"first_bad_index", first},
                 {"first_bad_coords", coordinates(pristine.view(i), first)},
                 {"expected", json_number(before)},
                 {"got", json_number(after)},
                 {"rule", "input_modified"}};
    return m;
  }
  return std::nullopt;
}

json json_number(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return x;
}

}  // namespace kmcts::worker
