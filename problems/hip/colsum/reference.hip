// Trusted reference: 32 row slices per column block, each a coalesced double-precision
// partial sum, combined in a fixed order in shared memory (deterministic).
#include "kmcts_hip.h"

constexpr int kCols = 32, kSlices = 32;

__global__ void colsum_reference(const float* __restrict__ x, float* __restrict__ s, int rows, int cols) {
  __shared__ double partial[kSlices][kCols];
  const int c = blockIdx.x * kCols + threadIdx.x;
  double acc = 0;
  for (int r = threadIdx.y; r < rows; r += kSlices) acc += x[(long long)r * cols + c];
  partial[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y == 0) {
    double total = 0;
    for (int k = 0; k < kSlices; ++k) total += partial[k][threadIdx.x];
    s[c] = (float)total;
  }
}

extern "C" void kmcts_hip_kernel(const kmcts_tensor* in, int32_t, kmcts_tensor* out, int32_t, hipStream_t stream) {
  const int rows = (int)in[0].shape[0], cols = (int)in[0].shape[1];
  colsum_reference<<<cols / kCols, dim3(kCols, kSlices), 0, stream>>>(static_cast<const float*>(in[0].data),
                                                                    static_cast<float*>(out[0].data), rows, cols);
}
