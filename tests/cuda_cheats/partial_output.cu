// Cheat: skips the last sixteenth of the output.
#include "kmcts_cuda.h"

__global__ void silu_most(const float* x, const float* g, float* y, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    y[i] = x[i] / (1.0f + expf(-x[i])) * g[i];
}

extern "C" void kmcts_cuda_kernel(const kmcts_tensor* in, int32_t, kmcts_tensor* out, int32_t, cudaStream_t stream) {
  silu_most<<<4096, 256, 0, stream>>>((const float*)in[0].data, (const float*)in[1].data, (float*)out[0].data,
                                      in[0].numel / 16 * 15);
}
