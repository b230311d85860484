// Trusted oracle for C = A * B (fp32 in and out): the textbook triple loop, accumulating
// each dot product in double so that the oracle's own rounding error is far below the
// tolerance that candidates (fp32 accumulation in any order) are held to. Shapes are read
// from the tensors, so the reference does not depend on the sizes in problem.json.
#include "kmcts_cpu.h"

extern "C" void kmcts_kernel(const kmcts_tensor* in, int32_t n_in, kmcts_tensor* out, int32_t n_out) {
  if (n_in != 2 || n_out != 1) return;
  const float* a = static_cast<const float*>(in[0].data);
  const float* b = static_cast<const float*>(in[1].data);
  float* c = static_cast<float*>(out[0].data);
  const int64_t m = in[0].shape[0], k = in[0].shape[1], n = in[1].shape[1];
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0.0;
      for (int64_t p = 0; p < k; ++p) sum += static_cast<double>(a[i * k + p]) * static_cast<double>(b[p * n + j]);
      c[i * n + j] = static_cast<float>(sum);
    }
}
