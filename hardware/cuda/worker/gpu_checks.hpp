#pragma once
// Correctness work of the CUDA worker done on the GPU, on a stream of its own: inputs drawn
// on the device (the same values as the host's fill_inputs, up to the last ulp of log/cos),
// outputs poisoned, compared with the reference's, and inputs checked unmodified. Only the
// per-block summaries and the elements a report names cross to the host, so a check costs
// microseconds, not the seconds of moving and scanning whole tensors on the CPU.
// The kernels' names carry kmcts_gpu_checks::kKernelMarker; Session tells the CUPTI timer to
// ignore them on this stream (they are not the candidate's stray work).
#include "hardware/cuda/worker/runtime.hpp"

#include <cstdint>
#include <optional>
#include <vector>

#include "hardware/cuda/worker/device.hpp"
#include "hardware/worker/compare_rule.hpp"
#include "hardware/worker/tensors.hpp"

namespace kmcts::worker {

class GpuChecks {
 public:
  GpuChecks();
  ~GpuChecks();
  GpuChecks(const GpuChecks&) = delete;
  GpuChecks& operator=(const GpuChecks&) = delete;

  cudaStream_t stream() const { return stream_; }
  /// Draws every input for (seed, stream_key, round), as fill_inputs would (asynchronous).
  void fill(DeviceTensors& inputs, const std::vector<TensorDesc>& descs, uint64_t seed, uint64_t stream_key, int round);
  /// The poison NaN in every output element (asynchronous).
  void poison(DeviceTensors& outputs);
  /// `to` = `from`, tensor by tensor (asynchronous).
  void copy(DeviceTensors& to, const DeviceTensors& from);
  /// compare_outputs' verdict on device tensors.
  std::optional<Mismatch> compare(const DeviceTensors& expected, const DeviceTensors& got,
                                  const std::vector<TensorDesc>& descs, double atol, double rtol);
  /// find_modified_input's verdict on device tensors.
  std::optional<Mismatch> modified_input(const DeviceTensors& pristine, const DeviceTensors& now,
                                         const std::vector<TensorDesc>& descs);

 private:
  double element(const DeviceTensors& t, size_t i, int64_t k) const;
  cudaStream_t stream_ = nullptr;
  OutputSummary* partials_ = nullptr;        // device, kCompareBlocks
  OutputSummary* host_partials_ = nullptr;   // pinned
  unsigned long long* first_ = nullptr;      // device
  unsigned long long* host_first_ = nullptr; // pinned
};

}  // namespace kmcts::worker
