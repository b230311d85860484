// Trusted oracle for a "valid" 2-D convolution (cross-correlation, as in deep learning):
// y[i][j] = sum over (di, dj) of w[di][dj] * x[i + di][j + dj]. Written for any kernel
// size read from w's shape, accumulating in double; the oracle's rounding is negligible.
#include "kmcts_cpu.h"

extern "C" void kmcts_kernel(const kmcts_tensor* in, int32_t n_in, kmcts_tensor* out, int32_t n_out) {
  if (n_in != 2 || n_out != 1) return;
  const float* x = static_cast<const float*>(in[0].data);
  const float* w = static_cast<const float*>(in[1].data);
  float* y = static_cast<float*>(out[0].data);
  const int64_t x_cols = in[0].shape[1];
  const int64_t kh = in[1].shape[0], kw = in[1].shape[1];
  const int64_t y_rows = out[0].shape[0], y_cols = out[0].shape[1];
  for (int64_t i = 0; i < y_rows; ++i)
    for (int64_t j = 0; j < y_cols; ++j) {
      double sum = 0.0;
      for (int64_t di = 0; di < kh; ++di)
        for (int64_t dj = 0; dj < kw; ++dj)
          sum += static_cast<double>(w[di * kw + dj]) * static_cast<double>(x[(i + di) * x_cols + j + dj]);
      y[i * y_cols + j] = static_cast<float>(sum);
    }
}
