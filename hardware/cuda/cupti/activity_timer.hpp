#pragma once
// GPU time of one sample from CUPTI's activity API (REFERENCE.md, measurement protocol): the
// union of every kernel (CONCURRENT_KERNEL), memcpy and memset interval recorded on any stream
// between a CUPTI timestamp taken before the launch and one taken after
// cudaDeviceSynchronize(). Work a candidate hides on a side stream or leaves running is in
// the window, so it is counted; CUDA events on the launch stream alone would miss it.
// One ActivityTimer per process (CUPTI's callbacks are process-wide).
#include <cstdint>
#include <functional>
#include <memory>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "hardware/cuda/cupti/kernel_attribution.hpp"
#include "hardware/cuda/kernel_table.hpp"
#include "hardware/cuda/timing_math.hpp"

namespace kmcts::cuda {

struct ActivitySample {
  uint64_t union_ns = 0;       // the sample's GPU time
  uint64_t window_ns = 0;      // CPU-side window, launch to synchronised
  int kernels = 0, memcpys = 0, memsets = 0;
  std::set<uint32_t> streams;  // streams the sample's work ran on
  std::set<std::string> kernel_names;  // as CUPTI reports them (mangled)
  KernelTable kernel_table;            // per launch: calls and time inside the window
  std::vector<Interval> intervals;
  // Kernels recorded outside any measured window: stray_before arrived between the previous
  // window and this one (left behind by the previous call), stray_after ran after this
  // window closed (this call's work escaping it: a host thread, a deferred launch).
  int stray_before = 0, stray_after = 0;
  std::set<std::string> stray_names;
  // With attribution on (ActivityTimer::attribute): the kernels' summed durations in the window
  // by owner, and the library kernels by launching object ("libtorch_cuda.so" -> count, ns).
  bool attributed = false;
  uint64_t own_ns = 0, library_ns = 0, unknown_ns = 0;
  int own_kernels = 0, library_kernels = 0, unknown_kernels = 0;
  std::map<std::string, std::pair<int, uint64_t>> library_objects;
};

class ActivityTimer {
 public:
  /// Enables the activity kinds and registers the buffer callbacks. Throws std::runtime_error
  /// naming the CUPTI call that failed.
  ActivityTimer();
  ~ActivityTimer();
  /// Runs `launch`, synchronises the device, and returns what ran in between. A CUDA error
  /// (sticky or not) is thrown as std::runtime_error with CUDA's message.
  ActivitySample measure(const std::function<void()>& launch);
  /// CUPTI's id of a stream of the current context, as the records report it.
  static uint32_t stream_id(void* cuda_stream);
  /// Kernels on stream `stream_id` whose names contain `marker` are the caller's own (the
  /// worker's GPU checks): neither timed nor counted as stray.
  void exempt(uint32_t stream_id, std::string marker);
  /// Tracing off (for the CUDA-event cross-check, which tracing would slow) and back on.
  void pause();
  void resume();
  /// Attributes every kernel of later samples to its owner (kernel_attribution.hpp): objects
  /// under `own_roots` are the code under test's own. Throws std::runtime_error when CUPTI's
  /// callbacks cannot be had (another subscriber).
  void attribute(std::vector<std::string> own_roots);

 private:
  std::unique_ptr<KernelAttribution> attribution_;
  uint32_t exempt_stream_ = 0;
  std::string exempt_marker_;
};

}  // namespace kmcts::cuda
