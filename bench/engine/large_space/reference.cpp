#include "kmcts_cpu.h"
extern "C" void kmcts_kernel(const kmcts_tensor* in, int32_t, kmcts_tensor* out, int32_t) {
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t i = 0; i < in[0].numel; ++i) y[i] = 2.0f * x[i];
}
