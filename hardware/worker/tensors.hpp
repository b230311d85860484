#pragma once
// Tensor buffers of one kernel call, and the three things correctness needs from them:
// random fills by distribution, NaN poisoning, and comparison against the reference.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/rng.hpp"
#include "hardware/worker/job.hpp"
#include "kmcts_cpu.h"

namespace kmcts::worker {

/// Owns one buffer per tensor (64-byte aligned: a cache line, and enough for AVX-512
/// loads) and the kmcts_tensor views the ABI passes to kernels.
class TensorSet {
 public:
  explicit TensorSet(const std::vector<TensorDesc>& descs);
  kmcts_tensor* views() { return views_.data(); }
  int32_t count() const { return static_cast<int32_t>(views_.size()); }
  const kmcts_tensor& view(size_t i) const { return views_[i]; }
  size_t bytes(size_t i) const { return bytes_[i]; }
  std::byte* data(size_t i) { return buffers_[i].get(); }
  const std::byte* data(size_t i) const { return buffers_[i].get(); }
  void copy_from(const TensorSet& other);  // same descs

 private:
  struct Free {
    void operator()(std::byte* p) const;
  };
  std::vector<std::unique_ptr<std::byte, Free>> buffers_;
  std::vector<size_t> bytes_;
  std::vector<kmcts_tensor> views_;
};

/// Independent random streams per phase (fill_inputs' `stream`), so changing the number of
/// trials never changes the timing inputs, and both workers draw the same inputs from a seed.
inline const uint64_t kCorrectnessStream = string_key("correctness");
inline const uint64_t kTimingStream = string_key("timing");
inline const uint64_t kFreshStream = string_key("fresh-inputs-same-buffers");

/// Which distribution input `input` uses in trial (or input set) `round`: they cycle.
const std::string& distribution_for(const TensorDesc& input, int round);

/// Fills every input with fresh draws; a pure function of (seed, stream, round).
void fill_inputs(TensorSet& inputs, const std::vector<TensorDesc>& descs, uint64_t seed, uint64_t stream, int round);

/// The poison NaNs: quiet NaNs with a payload a computation is unlikely to produce, so a
/// report can say "not written" rather than "computed NaN". Device poisoning uses them too.
inline constexpr uint32_t kPoisonF32 = 0x7fc0deadu;
inline constexpr uint64_t kPoisonF64 = 0x7ff800000000deadull;

/// Writes the poison NaN into every output element.
void poison(TensorSet& outputs);

/// One failed comparison: a one-line message and the details for agents and reports.
struct Mismatch {
  std::string message;
  nlohmann::json details;
};

/// Compares got with expected, output by output. The rule (fp32/fp64 alike):
///  1. expected NaN needs got NaN; expected +-Inf needs the same Inf; otherwise got must be finite;
///  2. elementwise allclose: |got - exp| <= atol + rtol * |exp|;
///  3. scale-aware: max |got - exp| <= max(atol, rtol) * max |exp| over finite expected
///     elements, so an output whose values are all far below atol cannot pass as zeros
///     (all-zero expected outputs must then be matched exactly).
std::optional<Mismatch> compare_outputs(const TensorSet& expected, const TensorSet& got,
                                        const std::vector<TensorDesc>& descs, double atol, double rtol);

/// compare_outputs' elementwise rule (1 and 2 below): NaN and Inf parity, else a finite `got`
/// with |got - expected| <= atol + rtol * |expected|.
bool element_matches(double expected, double got, double atol, double rtol);

/// The elementwise rule over `count` elements of output `output` of `expected`, from element
/// `offset`; `got` holds those elements (e.g. copied back from a device). For spot checks,
/// which see too few elements for the scale-aware rule.
std::optional<Mismatch> compare_span(const TensorSet& expected, size_t output, int64_t offset, int64_t count,
                                     const void* got, const TensorDesc& desc, double atol, double rtol);

/// The first input whose bytes differ from the pristine copy, if any.
std::optional<Mismatch> find_modified_input(const TensorSet& pristine, const TensorSet& now,
                                            const std::vector<TensorDesc>& descs);

/// JSON cannot carry NaN or Inf: those become the strings "nan", "inf", "-inf".
nlohmann::json json_number(double x);

}  // namespace kmcts::worker
