// Kernel attribution's rules (hardware/cuda/kernel_owner.hpp): whose a kernel is by the object
// that launched it, and inductor's kernels always a library's.
#include <doctest/doctest.h>

#include "hardware/cuda/kernel_owner.hpp"

using kmcts::cuda::is_inductor_kernel;
using kmcts::cuda::kernel_origin;
using kmcts::cuda::KernelOrigin;
using kmcts::cuda::KernelOwner;
using kmcts::cuda::owner_of_object;

TEST_CASE("an object under an own root is the candidate's own, anything else a library's") {
  const std::vector<std::string> roots = {"/cache/candidates/extensions/ab12", "/cache/triton/"};
  CHECK(owner_of_object("/cache/candidates/extensions/ab12/relu_ext/relu_ext.so", roots) == KernelOwner::own);
  CHECK(owner_of_object("/cache/triton/XYZ/__triton_launcher.so", roots) == KernelOwner::own);
  // another candidate's folder whose name starts the same is not this one's
  CHECK(owner_of_object("/cache/candidates/extensions/ab123/x.so", roots) == KernelOwner::library);
  CHECK(owner_of_object("/usr/lib/python3/dist-packages/torch/lib/libtorch_cuda.so", roots) == KernelOwner::library);
  CHECK(owner_of_object("/usr/local/lib/libcublasLt.so.13", roots) == KernelOwner::library);
  CHECK(owner_of_object("", roots) == KernelOwner::unknown);
  CHECK(owner_of_object("/cache/triton/x.so", {}) == KernelOwner::library);
  CHECK(owner_of_object("/cache/triton/x.so", {""}) == KernelOwner::library);
}

TEST_CASE("inductor's Triton kernels are a library's wherever they were launched from") {
  CHECK(is_inductor_kernel("triton_poi_fused_add_relu_0"));
  CHECK(is_inductor_kernel("triton_red_fused__softmax_1"));
  CHECK(is_inductor_kernel("triton_per_fused_native_layer_norm_0"));
  CHECK(is_inductor_kernel("triton_tem_fused_mm_0"));
  CHECK(is_inductor_kernel("triton_"));  // inductor with unique_kernel_names off
  CHECK_FALSE(is_inductor_kernel("my_triton_kernel"));
  CHECK_FALSE(is_inductor_kernel("triton_matmul_kernel"));  // a user's Triton kernel may be named so
  CHECK_FALSE(is_inductor_kernel("_Z10relu_kernelPKfPfi"));
  const KernelOrigin own{KernelOwner::own, "__triton_launcher.so"};
  CHECK(kernel_origin(own, "add_kernel").owner == KernelOwner::own);
  const KernelOrigin compiled = kernel_origin(own, "triton_poi_fused_mul_0");
  CHECK(compiled.owner == KernelOwner::library);
  CHECK(compiled.object == "inductor");
}
