#pragma once
// Who launched each kernel: the code under test ("own": its extensions, its Triton JIT kernels)
// or a library (ATen, cuBLAS, cuDNN, inductor). CUPTI's callback API reports every launch on
// the launching thread, before the kernel runs, with the correlation id its activity record
// will carry; the launch's origin is the shared object that holds the launched function:
//   - runtime launches (cudaLaunchKernel and its variants, what <<<...>>> compiles to): the
//     object of the host stub the launch names (dladdr), so a load_inline extension's kernels
//     are its own and the ATen kernel a `torch::relu` in its C++ launches is libtorch_cuda's;
//   - driver launches (cuLaunchKernel, cuLaunchKernelEx: Triton's launcher, cuBLAS): the first
//     frame of the launching thread's stack outside the CUDA libraries and CUPTI, resolved once
//     per CUfunction.
// Whose that object makes the kernel: hardware/cuda/kernel_owner.hpp. Kernels of a
// CUDA graph are attributed through the graph node their capture created. What no callback
// described is unknown: neither own nor library.
// One KernelAttribution per process (CUPTI allows one subscriber).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hardware/cuda/kernel_owner.hpp"

namespace kmcts::cuda {

class KernelAttribution {
 public:
  /// Subscribes to CUPTI's launch, and graph-node resource, callbacks. Throws
  /// std::runtime_error naming the CUPTI call that failed (another subscriber, e.g. a profiler
  /// already attached, makes attribution unavailable).
  explicit KernelAttribution(std::vector<std::string> own_roots);
  ~KernelAttribution();
  KernelAttribution(const KernelAttribution&) = delete;
  KernelAttribution& operator=(const KernelAttribution&) = delete;

  /// The origin of the kernel an activity record describes (its correlation id, graph node id
  /// (0 outside graphs) and name).
  KernelOrigin origin(uint32_t correlation_id, uint64_t graph_node_id, const std::string& kernel_name) const;
  /// Forgets the launches seen so far (their records were consumed); graph nodes are kept, as
  /// a graph replays them.
  void forget_launches();
  /// Launch callbacks seen since construction, by API (for diagnostics: "runtime", "driver").
  uint64_t runtime_launches() const;
  uint64_t driver_launches() const;

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace kmcts::cuda
