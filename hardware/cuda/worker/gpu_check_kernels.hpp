#pragma once
// The CUDA worker's own kernels (gpu_check_kernels.cu, built by nvcc): input fills, output
// poisoning, the comparison reduction and the input-modification scan, run on the device so
// that no tensor crosses to the host. Plain types only: this header is shared by nvcc and the
// host compiler. The namespace's name marks these kernels in CUPTI's records (gpu_checks.hpp).
#include "hardware/cuda/worker/runtime.hpp"

#include <cstdint>

#include "hardware/worker/compare_rule.hpp"
#include "hardware/worker/distributions.hpp"

namespace kmcts_gpu_checks {

inline constexpr const char* kKernelMarker = "kmcts_gpu_checks";
inline constexpr int kCompareBlocks = 264;  // partial summaries per output (2 per H200 SM)

/// Element k of `data` = fill_value(d, seed, key, k), as f64 or rounded to f32.
cudaError_t launch_fill(void* data, bool f64, int64_t numel, kmcts::worker::Distribution d, uint64_t seed, uint64_t key,
                        cudaStream_t stream);
/// Every element the poison NaN (kPoisonF32 / kPoisonF64).
cudaError_t launch_poison(void* data, bool f64, int64_t numel, cudaStream_t stream);
/// partials[b] = the OutputSummary of block b's contiguous share of the elements
/// (kCompareBlocks of them; merge them on the host).
cudaError_t launch_compare(const void* expected, const void* got, bool f64, int64_t numel, double atol, double rtol,
                           kmcts::worker::OutputSummary* partials, cudaStream_t stream);
/// *first = min(*first, index of the first 32-bit word where a and b differ); set *first to
/// ~0ull before.
cudaError_t launch_first_difference(const uint32_t* a, const uint32_t* b, int64_t words, unsigned long long* first,
                                    cudaStream_t stream);

}  // namespace kmcts_gpu_checks
