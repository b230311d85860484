# For KernelBench level2/9_Matmul_Subtract_Multiply_ReLU: a partial replacement, the common
# honest shape of level-2 solutions. The GEMM stays cuBLAS's (nn.Linear kept as the holder of
# the weight and bias, initialised as the reference's); the subtract, multiply and ReLU are one
# CUDA kernel of its own, in place on the GEMM's output. Built in the fast shape: no torch
# header in the CUDA source, the torch::Tensor wrapper in cpp_sources.
# expect-gpu: ok
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

CUDA_SOURCE = r"""
#include <cuda_runtime.h>

__global__ void sub_mul_relu_kernel(float4* __restrict__ y, long n4, float sub, float mul) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n4; i += (long)gridDim.x * blockDim.x) {
    float4 v = y[i];
    v.x = fmaxf((v.x - sub) * mul, 0.f);
    v.y = fmaxf((v.y - sub) * mul, 0.f);
    v.z = fmaxf((v.z - sub) * mul, 0.f);
    v.w = fmaxf((v.w - sub) * mul, 0.f);
    y[i] = v;
  }
}

extern "C" void sub_mul_relu_launch(float* y, long n, float sub, float mul, cudaStream_t stream) {
  const long n4 = n / 4;
  const int threads = 256;
  long blocks = (n4 + threads - 1) / threads;
  if (blocks > 132L * 16) blocks = 132L * 16;
  sub_mul_relu_kernel<<<(int)blocks, threads, 0, stream>>>(reinterpret_cast<float4*>(y), n4, sub, mul);
}
"""

CPP_SOURCE = r"""
#include <c10/cuda/CUDAStream.h>

extern "C" void sub_mul_relu_launch(float* y, long n, float sub, float mul, cudaStream_t stream);

torch::Tensor sub_mul_relu_(torch::Tensor y, double sub, double mul) {
  TORCH_CHECK(y.is_cuda() && y.scalar_type() == torch::kFloat && y.is_contiguous() && y.numel() % 4 == 0,
              "sub_mul_relu_: contiguous CUDA float, a multiple of 4 elements");
  sub_mul_relu_launch(y.data_ptr<float>(), y.numel(), (float)sub, (float)mul, c10::cuda::getCurrentCUDAStream());
  return y;
}
"""

ext = load_inline(name="kmcts_attr_sub_mul_relu", cpp_sources=CPP_SOURCE, cuda_sources=CUDA_SOURCE,
                  functions=["sub_mul_relu_"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, subtract_value, multiply_value):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.subtract_value = subtract_value
        self.multiply_value = multiply_value

    def forward(self, x):
        y = F.linear(x, self.linear.weight, self.linear.bias)
        return ext.sub_mul_relu_(y, self.subtract_value, self.multiply_value)
