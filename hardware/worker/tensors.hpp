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
#include "hardware/worker/compare_rule.hpp"
#include "hardware/worker/distributions.hpp"
#include "hardware/worker/job.hpp"
#include "kmcts_cpu.h"

namespace kmcts::worker {

/// Owns one buffer per tensor (64-byte aligned: a cache line, and enough for AVX-512
/// loads) and the kmcts_tensor views the ABI passes to kernels.
class SharedArena;

class TensorSet {
 public:
  /// With an arena, the buffers are carved from it (and the arena frees them).
  explicit TensorSet(const std::vector<TensorDesc>& descs, SharedArena* arena = nullptr);
  kmcts_tensor* views() { return views_.data(); }
  int32_t count() const { return static_cast<int32_t>(views_.size()); }
  const kmcts_tensor& view(size_t i) const { return views_[i]; }
  size_t bytes(size_t i) const { return bytes_[i]; }
  std::byte* data(size_t i) { return buffers_[i].get(); }
  const std::byte* data(size_t i) const { return buffers_[i].get(); }
  void copy_from(const TensorSet& other);  // same descs

 private:
  struct Free {
    bool owned = true;
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

/// The counter key of input `input` in a fill for (stream, round): fill_value(d, seed, key, k)
/// (distributions.hpp) is its element k.
uint64_t fill_key(uint64_t stream, int round, size_t input);

/// The distribution input `input` draws from in `round`; throws std::invalid_argument on a
/// name distributions.hpp does not know.
Distribution fill_distribution(const TensorDesc& input, int round);

/// Fills every input with fresh draws; a pure function of (seed, stream, round).
void fill_inputs(TensorSet& inputs, const std::vector<TensorDesc>& descs, uint64_t seed, uint64_t stream, int round);

/// Writes the poison NaN into every output element.
void poison(TensorSet& outputs);

/// One failed comparison: a one-line message and the details for agents and reports.
struct Mismatch {
  std::string message;
  nlohmann::json details;
};

/// Compares got with expected, output by output, by the rule of compare_rule.hpp.
std::optional<Mismatch> compare_outputs(const TensorSet& expected, const TensorSet& got,
                                        const std::vector<TensorDesc>& descs, double atol, double rtol);

/// The verdict on one output from its summary (compare_rule.hpp), wherever it was computed;
/// `expected`, `got` and `got_poison` describe the element summary.failing_index() names.
std::optional<Mismatch> output_mismatch(const TensorDesc& desc, const OutputSummary& summary, double expected,
                                        double got, bool got_poison, double atol, double rtol);

/// The report of input `desc` modified at element `first` (`before` became `after`).
Mismatch modified_input_mismatch(const TensorDesc& desc, int64_t first, double before, double after);

/// The first input whose bytes differ from the pristine copy, if any.
std::optional<Mismatch> find_modified_input(const TensorSet& pristine, const TensorSet& now,
                                            const std::vector<TensorDesc>& descs);

/// JSON cannot carry NaN or Inf: those become the strings "nan", "inf", "-inf".
nlohmann::json json_number(double x);

}  // namespace kmcts::worker
