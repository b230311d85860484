#pragma once
// One measurement at a time per GPU: measure() leases a free GPU of the pool and gives it
// back when done, so several measurement slots spread over the GPUs of one host and never
// share one.
#include <condition_variable>
#include <mutex>
#include <vector>

namespace kmcts::cuda {

class GpuPool {
 public:
  /// `devices`: CUDA device indices; must not be empty (std::invalid_argument).
  explicit GpuPool(std::vector<int> devices);

  class Lease {
   public:
    Lease(GpuPool& pool, int device) : pool_(&pool), device_(device) {}
    Lease(Lease&& other) noexcept : pool_(other.pool_), device_(other.device_) { other.pool_ = nullptr; }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    int device() const { return device_; }

   private:
    GpuPool* pool_;
    int device_;
  };

  /// Blocks until a GPU is free; the lowest free index first.
  Lease acquire();
  const std::vector<int>& devices() const { return devices_; }
  size_t size() const { return devices_.size(); }

 private:
  void release(int device);

  std::vector<int> devices_;
  std::vector<int> free_;
  std::mutex mutex_;
  std::condition_variable changed_;
};

}  // namespace kmcts::cuda
