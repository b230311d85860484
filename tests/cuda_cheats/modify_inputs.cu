// Cheat: uses the input X as scratch (silu written over X in place, then multiplied).
#include "kmcts_cuda.h"

__global__ void silu_in_place(float* x, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    x[i] = x[i] / (1.0f + expf(-x[i]));
}
__global__ void times(const float* s, const float* g, float* y, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    y[i] = s[i] * g[i];
}

extern "C" void kmcts_cuda_kernel(const kmcts_tensor* in, int32_t, kmcts_tensor* out, int32_t, cudaStream_t stream) {
  float* x = (float*)in[0].data;  // declared const by the ABI; written anyway
  silu_in_place<<<4096, 256, 0, stream>>>(x, in[0].numel);
  times<<<4096, 256, 0, stream>>>(x, (const float*)in[1].data, (float*)out[0].data, in[0].numel);
}
