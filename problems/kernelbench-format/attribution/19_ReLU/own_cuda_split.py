# For KernelBench level1/19_ReLU: the same ReLU kernel as own_cuda.py, built in the shape that
# builds in seconds: the CUDA source holds the kernel and a launcher over raw pointers, with no
# torch header (nvcc then parses no torch), and the torch::Tensor wrapper is C++ in cpp_sources
# (the binding, compiled with kmcts's precompiled torch/extension.h).
# expect-gpu: ok
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SOURCE = r"""
#include <cuda_runtime.h>
#include <algorithm>

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, long n) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
    const float v = x[i];
    y[i] = v > 0.f ? v : 0.f;
  }
}

extern "C" void relu_launch(const float* x, float* y, long n, cudaStream_t stream) {
  const int threads = 256;
  const int blocks = (int)std::min<long>((n + threads - 1) / threads, 132L * 32);
  relu_kernel<<<blocks, threads, 0, stream>>>(x, y, n);
}
"""

CPP_SOURCE = r"""
#include <c10/cuda/CUDAStream.h>

extern "C" void relu_launch(const float* x, float* y, long n, cudaStream_t stream);

torch::Tensor relu_forward(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat && x.is_contiguous(), "relu_forward: contiguous CUDA float");
  auto y = torch::empty_like(x);
  relu_launch(x.data_ptr<float>(), y.data_ptr<float>(), x.numel(), c10::cuda::getCurrentCUDAStream());
  return y;
}
"""

ext = load_inline(name="kmcts_attr_relu_split", cpp_sources=CPP_SOURCE, cuda_sources=CUDA_SOURCE,
                  functions=["relu_forward"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.relu_forward(x.contiguous())
