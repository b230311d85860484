#pragma once
// GPU time of one sample from CUPTI's activity API (REFERENCE.md, measurement protocol): the
// union of every kernel (CONCURRENT_KERNEL), memcpy and memset interval recorded on any stream
// between a CUPTI timestamp taken before the launch and one taken after
// cudaDeviceSynchronize(). Work a candidate hides on a side stream or leaves running is in
// the window, so it is counted; CUDA events on the launch stream alone would miss it.
// One ActivityTimer per process (CUPTI's callbacks are process-wide).
#include <cstdint>
#include <functional>
#include <set>
#include <vector>

#include "hardware/cuda/timing_math.hpp"

namespace kmcts::cuda {

struct ActivitySample {
  uint64_t union_ns = 0;       // the sample's GPU time
  uint64_t window_ns = 0;      // CPU-side window, launch to synchronised
  int kernels = 0, memcpys = 0, memsets = 0;
  std::set<uint32_t> streams;  // streams the sample's work ran on
  std::vector<Interval> intervals;
};

class ActivityTimer {
 public:
  /// Enables the activity kinds and registers the buffer callbacks. Throws std::runtime_error
  /// naming the CUPTI call that failed.
  ActivityTimer();
  ~ActivityTimer();
  /// Runs `launch`, synchronises the device, and returns what ran in between.
  ActivitySample measure(const std::function<void()>& launch);
};

}  // namespace kmcts::cuda
