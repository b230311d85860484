// Trusted oracle for row-wise layer norm: y = (x - mean) / sqrt(var + eps) * gamma + beta
// over each row of x. Textbook two-pass statistics in double (mean first, then the mean of
// squared deviations), so the oracle's own rounding is far below the tolerance.
#include <cmath>

#include "kmcts_cpu.h"

extern "C" void kmcts_kernel(const kmcts_tensor* in, int32_t n_in, kmcts_tensor* out, int32_t n_out) {
  if (n_in != 3 || n_out != 1) return;
  const float* x = static_cast<const float*>(in[0].data);
  const float* gamma = static_cast<const float*>(in[1].data);
  const float* beta = static_cast<const float*>(in[2].data);
  float* y = static_cast<float*>(out[0].data);
  const int64_t rows = in[0].shape[0], cols = in[0].shape[1];
  const double eps = 1e-5;
  for (int64_t i = 0; i < rows; ++i) {
    const float* row = x + i * cols;
    double sum = 0.0;
    for (int64_t j = 0; j < cols; ++j) sum += row[j];
    const double mean = sum / static_cast<double>(cols);
    double squares = 0.0;
    for (int64_t j = 0; j < cols; ++j) squares += (row[j] - mean) * (row[j] - mean);
    const double inv_std = 1.0 / std::sqrt(squares / static_cast<double>(cols) + eps);
    for (int64_t j = 0; j < cols; ++j)
      y[i * cols + j] = static_cast<float>((row[j] - mean) * inv_std * gamma[j] + beta[j]);
  }
}
