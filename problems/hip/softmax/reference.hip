// Trusted reference: a block per row, three passes (max, sum in double, write), precise expf.
#include <cfloat>

#include "kmcts_hip.h"

constexpr int kThreads = 256;

__global__ void softmax_reference(const float* __restrict__ x, float* __restrict__ y, int cols) {
  __shared__ float smax[kThreads];
  __shared__ double ssum[kThreads];
  const float* row = x + (long long)blockIdx.x * cols;
  float* out = y + (long long)blockIdx.x * cols;
  float m = -FLT_MAX;
  for (int c = threadIdx.x; c < cols; c += kThreads) m = fmaxf(m, row[c]);
  smax[threadIdx.x] = m;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) smax[threadIdx.x] = fmaxf(smax[threadIdx.x], smax[threadIdx.x + s]);
    __syncthreads();
  }
  m = smax[0];
  double sum = 0;
  for (int c = threadIdx.x; c < cols; c += kThreads) sum += expf(row[c] - m);
  ssum[threadIdx.x] = sum;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) ssum[threadIdx.x] += ssum[threadIdx.x + s];
    __syncthreads();
  }
  const float inv = (float)(1.0 / ssum[0]);
  for (int c = threadIdx.x; c < cols; c += kThreads) out[c] = expf(row[c] - m) * inv;
}

extern "C" void kmcts_hip_kernel(const kmcts_tensor* in, int32_t, kmcts_tensor* out, int32_t, hipStream_t stream) {
  const int rows = (int)in[0].shape[0], cols = (int)in[0].shape[1];
  softmax_reference<<<rows, kThreads, 0, stream>>>(static_cast<const float*>(in[0].data), static_cast<float*>(out[0].data),
                                                  cols);
}
