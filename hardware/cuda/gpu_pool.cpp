#include "hardware/cuda/gpu_pool.hpp"

#include <algorithm>
#include <stdexcept>

namespace kmcts::cuda {

GpuPool::GpuPool(std::vector<int> devices) : devices_(std::move(devices)), free_(devices_) {
  if (devices_.empty()) throw std::invalid_argument("a GPU pool needs at least one device");
}

GpuPool::Lease::~Lease() {
  if (pool_) pool_->release(device_);
}

GpuPool::Lease GpuPool::acquire() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return !free_.empty(); });
  auto lowest = std::min_element(free_.begin(), free_.end());
  const int device = *lowest;
  free_.erase(lowest);
  return Lease(*this, device);
}

void GpuPool::release(int device) {
  {
    std::lock_guard lock(mutex_);
    free_.push_back(device);
  }
  changed_.notify_one();
}

}  // namespace kmcts::cuda
