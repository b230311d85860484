#include "hardware/cuda/worker/gpu_check_kernels.hpp"

namespace kmcts_gpu_checks {
namespace {

using kmcts::worker::Distribution;
using kmcts::worker::OutputSummary;

constexpr int kThreads = 256;

int grid_for(int64_t numel) {
  const int64_t blocks = (numel + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < 4096 ? (blocks > 0 ? blocks : 1) : 4096);
}

__global__ void fill_kernel(void* data, bool f64, int64_t numel, Distribution d, uint64_t seed, uint64_t key) {
  for (int64_t k = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; k < numel;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const double x = kmcts::worker::fill_value(d, seed, key, k);
    if (f64)
      static_cast<double*>(data)[k] = x;
    else
      static_cast<float*>(data)[k] = static_cast<float>(x);
  }
}

__global__ void poison_kernel(void* data, bool f64, int64_t numel) {
  for (int64_t k = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; k < numel;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    if (f64)
      static_cast<unsigned long long*>(data)[k] = kmcts::worker::kPoisonF64;
    else
      static_cast<uint32_t*>(data)[k] = kmcts::worker::kPoisonF32;
  }
}

__device__ double element_at(const void* p, bool f64, int64_t k) {
  return f64 ? static_cast<const double*>(p)[k] : static_cast<double>(static_cast<const float*>(p)[k]);
}

__device__ bool poison_at(const void* p, bool f64, int64_t k) {
  return f64 ? static_cast<const unsigned long long*>(p)[k] == kmcts::worker::kPoisonF64
             : static_cast<const uint32_t*>(p)[k] == kmcts::worker::kPoisonF32;
}

// One block per contiguous share; each thread folds its strided elements in increasing
// order, then the block merges the threads' summaries (merge is order-free).
__global__ void compare_kernel(const void* expected, const void* got, bool f64, int64_t numel, double atol, double rtol,
                               OutputSummary* partials) {
  alignas(OutputSummary) __shared__ unsigned char storage[kThreads * sizeof(OutputSummary)];
  auto* sums = reinterpret_cast<OutputSummary*>(storage);
  const int64_t share = (numel + gridDim.x - 1) / gridDim.x;
  const int64_t begin = blockIdx.x * share;
  const int64_t end = begin + share < numel ? begin + share : numel;
  OutputSummary mine;
  for (int64_t k = begin + threadIdx.x; k < end; k += blockDim.x)
    mine.add(k, element_at(expected, f64, k), element_at(got, f64, k), poison_at(got, f64, k), atol, rtol);
  sums[threadIdx.x] = mine;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) sums[threadIdx.x].merge(sums[threadIdx.x + half]);
    __syncthreads();
  }
  if (threadIdx.x == 0) partials[blockIdx.x] = sums[0];
}

__global__ void first_difference_kernel(const uint32_t* a, const uint32_t* b, int64_t words, unsigned long long* first) {
  for (int64_t k = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; k < words;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x)
    if (a[k] != b[k]) {
      atomicMin(first, static_cast<unsigned long long>(k));
      return;  // later words of this thread cannot be earlier
    }
}

}  // namespace

cudaError_t launch_fill(void* data, bool f64, int64_t numel, Distribution d, uint64_t seed, uint64_t key,
                        cudaStream_t stream) {
  fill_kernel<<<grid_for(numel), kThreads, 0, stream>>>(data, f64, numel, d, seed, key);
  return cudaGetLastError();
}

cudaError_t launch_poison(void* data, bool f64, int64_t numel, cudaStream_t stream) {
  poison_kernel<<<grid_for(numel), kThreads, 0, stream>>>(data, f64, numel);
  return cudaGetLastError();
}

cudaError_t launch_compare(const void* expected, const void* got, bool f64, int64_t numel, double atol, double rtol,
                           OutputSummary* partials, cudaStream_t stream) {
  compare_kernel<<<kCompareBlocks, kThreads, 0, stream>>>(expected, got, f64, numel, atol, rtol, partials);
  return cudaGetLastError();
}

cudaError_t launch_first_difference(const uint32_t* a, const uint32_t* b, int64_t words, unsigned long long* first,
                                    cudaStream_t stream) {
  first_difference_kernel<<<grid_for(words), kThreads, 0, stream>>>(a, b, words, first);
  return cudaGetLastError();
}

}  // namespace kmcts_gpu_checks
