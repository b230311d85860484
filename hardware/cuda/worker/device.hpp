#pragma once
// Device-side helpers of the CUDA worker: checked CUDA calls, device copies of the host
// tensor sets, the L2 flush, and the SM clock (NVML, loaded at run time where present).
#include "hardware/cuda/worker/runtime.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "hardware/worker/tensors.hpp"

namespace kmcts::worker {

/// A CUDA error. After one the context may be unusable (errors such as an illegal address
/// are sticky), so the worker reports and exits; the evaluator starts a fresh one.
struct CudaFault : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Throws CudaFault "what: CUDA's message" unless `e` is cudaSuccess.
void cuda_check(cudaError_t e, const std::string& what);

/// One device allocation that tensor sets are carved from, each tensor at a 2 MiB boundary
/// (the GPU's large-page size), so that the buffers of a rotated input set keep the same
/// placement relative to each other in every worker process: where an output lies relative
/// to the inputs moves a bandwidth-bound kernel's time by ~0.3% on the H200.
class DeviceArena {
 public:
  static constexpr size_t kAlign = size_t{2} << 20;
  /// Bytes an arena needs for these tensor lists.
  static size_t bytes_for(const std::vector<const std::vector<TensorDesc>*>& lists);
  explicit DeviceArena(size_t bytes);
  ~DeviceArena();
  DeviceArena(const DeviceArena&) = delete;
  DeviceArena& operator=(const DeviceArena&) = delete;
  /// The next `bytes` (rounded up to kAlign); throws CudaFault when the arena is full.
  void* take(size_t bytes, const std::string& what);
  /// Unique in this process: how a kernel host names the arena.
  int id() const { return id_; }
  const char* base() const { return base_; }
  /// The CUDA IPC handle of the whole arena, hex: what a kernel host maps (only arenas handed
  /// to a host are ever exported).
  std::string ipc_handle() const;

 private:
  int id_;
  char* base_ = nullptr;
  size_t bytes_ = 0;
  size_t used_ = 0;
};

/// Bytes of one tensor on the device.
size_t tensor_bytes(const TensorDesc& d);

/// Device buffers for a call's tensors (the job's descriptors), with views whose data
/// pointers are device pointers: what kernels receive. With an arena the buffers are carved
/// from it (and the arena frees them); without, each is its own cudaMalloc.
class DeviceTensors {
 public:
  explicit DeviceTensors(const std::vector<TensorDesc>& descs, DeviceArena* arena = nullptr);
  ~DeviceTensors();
  DeviceTensors(const DeviceTensors&) = delete;
  DeviceTensors& operator=(const DeviceTensors&) = delete;
  DeviceTensors(DeviceTensors&& other) noexcept;

  kmcts_tensor* views() { return views_.data(); }
  const kmcts_tensor& view(size_t i) const { return views_[i]; }
  /// The arena the buffers were carved from (null without one), and tensor i's offset in it.
  const DeviceArena* arena() const { return arena_; }
  size_t offset(size_t i) const;
  void* data(size_t i) { return buffers_[i]; }
  const void* data(size_t i) const { return buffers_[i]; }
  int32_t count() const { return static_cast<int32_t>(buffers_.size()); }
  /// Device-to-device copy from a set with the same descriptors, enqueued on `stream`.
  void copy_from(const DeviceTensors& other, cudaStream_t stream);
  /// Copies `count` elements of tensor `i` from element `offset` to `out` (synchronous).
  void read_elements(size_t i, int64_t offset, int64_t count, void* out) const;
  size_t bytes(size_t i) const { return bytes_[i]; }
  size_t element_bytes(size_t i) const;

 private:
  std::vector<kmcts_tensor> views_;
  std::vector<void*> buffers_;
  std::vector<size_t> bytes_;
  const DeviceArena* arena_ = nullptr;
  bool owned_ = true;
};

/// Evicts the L2 before a sample: a memset of max(2 x L2, 128 MiB) (REFERENCE.md; on HIP at
/// least 512 MiB, for MI300X's Infinity Cache), with a new byte value each time, and the
/// persisting L2 lines reset (CUDA).
class L2Flusher {
 public:
  /// `bytes` 0 = max(2 x the device's L2, 128 MiB), or 512 MiB on HIP.
  L2Flusher(int device, size_t bytes);
  ~L2Flusher();
  void flush(cudaStream_t stream);
  size_t bytes() const { return bytes_; }

 private:
  void* buffer_ = nullptr;
  size_t bytes_ = 0;
  unsigned char value_ = 0;
};

/// The SM clock through NVML, loaded at run time (libnvidia-ml.so.1 comes with the driver);
/// absent NVML reads nullopt and no sample is dropped for its clock.
class SmClock {
 public:
  explicit SmClock(int cuda_device);
  ~SmClock();
  std::optional<unsigned> mhz() const;
  bool available() const { return device_ != nullptr; }

 private:
  void* library_ = nullptr;
  void* device_ = nullptr;
  int (*clock_info_)(void*, int, unsigned*) = nullptr;
};

}  // namespace kmcts::worker
