#pragma once
// Whose a GPU kernel is, by the object that launched it (kernel attribution's rules, free of
// CUDA so that CI tests them; hardware/cuda/cupti/kernel_attribution.hpp applies them to what
// CUPTI reports): a kernel launched from a shared object under one of the code under test's
// own folders (its extensions, its Triton cache) is its own; from anywhere else (ATen, cuBLAS,
// cuDNN) a library's; Triton kernels inductor generated (torch.compile) are a library's
// ("inductor") wherever they were compiled.
#include <cstdint>
#include <string>
#include <vector>

namespace kmcts::cuda {

enum class KernelOwner : uint8_t { unknown, own, library };

struct KernelOrigin {
  KernelOwner owner = KernelOwner::unknown;
  std::string object;  // basename of the launching object ("libtorch_cuda.so"), "inductor", "" if unknown
};

/// True for the names inductor gives its Triton kernels (triton_poi_fused_add_0, ...).
bool is_inductor_kernel(const std::string& name);

/// Own when `object_path` lies under one of `own_roots` (compared as given: callers pass
/// canonical paths), library otherwise, unknown when the path is empty.
KernelOwner owner_of_object(const std::string& object_path, const std::vector<std::string>& own_roots);

/// The origin of kernel `kernel_name` launched from `launch` (inductor's kernels re-owned).
KernelOrigin kernel_origin(const KernelOrigin& launch, const std::string& kernel_name);

}  // namespace kmcts::cuda
