#include "hardware/cuda/worker/device.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstring>

namespace kmcts::worker {

void cuda_check(cudaError_t e, const std::string& what) {
  if (e != cudaSuccess) throw CudaFault(what + ": " + cudaGetErrorString(e));
}

size_t tensor_bytes(const TensorDesc& d) { return static_cast<size_t>(d.numel) * (d.dtype == KMCTS_F64 ? 8 : 4); }

namespace {
size_t aligned(size_t bytes) { return (bytes + DeviceArena::kAlign - 1) / DeviceArena::kAlign * DeviceArena::kAlign; }
}  // namespace

size_t DeviceArena::bytes_for(const std::vector<const std::vector<TensorDesc>*>& lists) {
  size_t total = 0;
  for (const auto* list : lists)
    for (const auto& d : *list) total += aligned(tensor_bytes(d));
  return total;
}

namespace {
int next_arena_id = 0;
}  // namespace

DeviceArena::DeviceArena(size_t bytes) : id_(next_arena_id++), bytes_(bytes) {
  void* p = nullptr;
  cuda_check(cudaMalloc(&p, std::max(bytes, kAlign)), "cudaMalloc of " + std::to_string(bytes) + " bytes for the tensors");
  base_ = static_cast<char*>(p);
}

DeviceArena::~DeviceArena() { (void)cudaFree(base_); }

std::string DeviceArena::ipc_handle() const {
  cudaIpcMemHandle_t h{};
  cuda_check(cudaIpcGetMemHandle(&h, base_), "cudaIpcGetMemHandle");
  static const char* digits = "0123456789abcdef";
  std::string hex;
  for (char c : h.reserved) {
    const auto b = static_cast<unsigned char>(c);
    hex += digits[b >> 4];
    hex += digits[b & 15];
  }
  return hex;
}

void* DeviceArena::take(size_t bytes, const std::string& what) {
  const size_t need = aligned(bytes);
  if (used_ + need > bytes_) throw CudaFault("the tensor arena has no room for '" + what + "'");
  void* p = base_ + used_;
  used_ += need;
  return p;
}

DeviceTensors::DeviceTensors(const std::vector<TensorDesc>& descs, DeviceArena* arena)
    : arena_(arena), owned_(arena == nullptr) {
  for (const auto& d : descs) {
    kmcts_tensor v{};
    v.dtype = d.dtype;
    v.ndim = static_cast<int32_t>(d.shape.size());
    for (size_t k = 0; k < d.shape.size(); ++k) v.shape[k] = d.shape[k];
    v.numel = d.numel;
    const size_t bytes = tensor_bytes(d);
    void* p = nullptr;
    if (arena != nullptr)
      p = arena->take(bytes, d.name);
    else
      cuda_check(cudaMalloc(&p, bytes), "cudaMalloc of " + std::to_string(bytes) + " bytes for '" + d.name + "'");
    v.data = p;
    buffers_.push_back(p);
    bytes_.push_back(bytes);
    views_.push_back(v);
  }
}

DeviceTensors::~DeviceTensors() {
  if (owned_)
    for (void* p : buffers_) (void)cudaFree(p);
}

DeviceTensors::DeviceTensors(DeviceTensors&& other) noexcept
    : views_(std::move(other.views_)), buffers_(std::move(other.buffers_)), bytes_(std::move(other.bytes_)),
      arena_(other.arena_), owned_(other.owned_) {
  other.buffers_.clear();
}

void DeviceTensors::copy_from(const DeviceTensors& other, cudaStream_t stream) {
  for (size_t i = 0; i < buffers_.size(); ++i)
    cuda_check(cudaMemcpyAsync(buffers_[i], other.buffers_[i], bytes_[i], cudaMemcpyDeviceToDevice, stream), "copy");
}

size_t DeviceTensors::offset(size_t i) const {
  if (!arena_) throw CudaFault("tensors without an arena cannot be shared with a kernel host");
  return static_cast<size_t>(static_cast<const char*>(buffers_[i]) - arena_->base());
}

size_t DeviceTensors::element_bytes(size_t i) const { return views_[i].dtype == KMCTS_F64 ? 8 : 4; }

void DeviceTensors::read_elements(size_t i, int64_t offset, int64_t count, void* out) const {
  const size_t width = element_bytes(i);
  cuda_check(cudaMemcpy(out, static_cast<const char*>(buffers_[i]) + static_cast<size_t>(offset) * width,
                        static_cast<size_t>(count) * width, cudaMemcpyDeviceToHost),
             "reading an element");
}

L2Flusher::L2Flusher(int device, size_t bytes) {
  int l2 = 0;
  cuda_check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device), "L2 size");
  // AMD's MI300X keeps a 256 MB Infinity Cache behind its L2s, which the reported L2 size
  // leaves out: the HIP build evicts twice that.
  const size_t floor = kHip ? size_t{512} << 20 : size_t{128} << 20;
  bytes_ = bytes ? bytes : std::max<size_t>(2 * static_cast<size_t>(l2), floor);
  cuda_check(cudaMalloc(&buffer_, bytes_), "cudaMalloc of the L2 flush buffer");
}

L2Flusher::~L2Flusher() { (void)cudaFree(buffer_); }

void L2Flusher::flush(cudaStream_t stream) {
  cuda_check(cudaMemsetAsync(buffer_, ++value_, bytes_, stream), "L2 flush");
#ifndef KMCTS_HIP  // AMD GPUs have no persisting L2 lines
  cuda_check(cudaCtxResetPersistingL2Cache(), "cudaCtxResetPersistingL2Cache");
#endif
}

// NVML's C API, declared here for the three calls used (nvml.h is not on every build host):
// nvmlInit_v2(), nvmlDeviceGetHandleByPciBusId_v2(const char*, nvmlDevice_t*),
// nvmlDeviceGetClockInfo(nvmlDevice_t, nvmlClockType_t, unsigned*); NVML_CLOCK_SM = 1.
SmClock::SmClock(int cuda_device) {
  library_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library_) return;
  auto init = reinterpret_cast<int (*)()>(dlsym(library_, "nvmlInit_v2"));
  auto by_bus = reinterpret_cast<int (*)(const char*, void**)>(dlsym(library_, "nvmlDeviceGetHandleByPciBusId_v2"));
  clock_info_ = reinterpret_cast<int (*)(void*, int, unsigned*)>(dlsym(library_, "nvmlDeviceGetClockInfo"));
  char bus[64] = {};
  if (!init || !by_bus || !clock_info_ || init() != 0 || cudaDeviceGetPCIBusId(bus, sizeof bus, cuda_device) != cudaSuccess ||
      by_bus(bus, &device_) != 0)
    device_ = nullptr;
}

SmClock::~SmClock() {
  if (library_) dlclose(library_);
}

std::optional<unsigned> SmClock::mhz() const {
  unsigned value = 0;
  if (!device_ || clock_info_(device_, 1, &value) != 0) return std::nullopt;
  return value;
}

}  // namespace kmcts::worker
