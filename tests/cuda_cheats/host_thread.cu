// Cheat: a host thread launches the work a little later; the call itself returns at once.
#include <chrono>
#include <thread>

#include "kmcts_cuda.h"

__global__ void silu_late(const float* x, const float* g, float* y, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    y[i] = x[i] / (1.0f + expf(-x[i])) * g[i];
}

extern "C" void kmcts_cuda_kernel(const kmcts_tensor* in, int32_t, kmcts_tensor* out, int32_t, cudaStream_t stream) {
  const float* x = (const float*)in[0].data;
  const float* g = (const float*)in[1].data;
  float* y = (float*)out[0].data;
  const long long n = in[0].numel;
  std::thread([=] {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    silu_late<<<4096, 256, 0, stream>>>(x, g, y, n);
  }).detach();
}
