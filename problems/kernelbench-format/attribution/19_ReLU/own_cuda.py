# For KernelBench level1/19_ReLU: a load_inline extension with a ReLU kernel of its own.
# expect-gpu: ok
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SOURCE = r"""
#include <torch/extension.h>

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, long n) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
    const float v = x[i];
    y[i] = v > 0.f ? v : 0.f;
  }
}

torch::Tensor relu_forward(torch::Tensor x) {
  auto y = torch::empty_like(x);
  const long n = x.numel();
  const int threads = 256;
  const int blocks = (int)std::min<long>((n + threads - 1) / threads, 132L * 32);
  relu_kernel<<<blocks, threads>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
  return y;
}
"""

ext = load_inline(name="kmcts_attr_relu_cuda", cpp_sources="torch::Tensor relu_forward(torch::Tensor x);",
                  cuda_sources=CUDA_SOURCE, functions=["relu_forward"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.relu_forward(x.contiguous())
