// Trusted reference: cuBLAS SGEMM in pedantic fp32 (no TF32 tensor cores). Row-major
// C = A * B is column-major C^T = B^T * A^T, so B and A are passed in swapped order.
#include <cublas_v2.h>

#include <cstdio>
#include <cstdlib>

#include "kmcts_cuda.h"

static cublasHandle_t handle() {
  static cublasHandle_t h = [] {
    cublasHandle_t created = nullptr;
    if (cublasCreate(&created) != CUBLAS_STATUS_SUCCESS) {
      std::fprintf(stderr, "reference: cublasCreate failed\n");
      std::abort();
    }
    cublasSetMathMode(created, CUBLAS_PEDANTIC_MATH);
    return created;
  }();
  return h;
}

extern "C" void kmcts_cuda_kernel(const kmcts_tensor* in, int32_t, kmcts_tensor* out, int32_t, cudaStream_t stream) {
  const int m = (int)in[0].shape[0], k = (int)in[0].shape[1], n = (int)in[1].shape[1];
  const float one = 1.0f, zero = 0.0f;
  cublasSetStream(handle(), stream);
  if (cublasSgemm(handle(), CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, static_cast<const float*>(in[1].data), n,
                  static_cast<const float*>(in[0].data), k, &zero, static_cast<float*>(out[0].data), n) !=
      CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "reference: cublasSgemm failed\n");
    std::abort();
  }
}
