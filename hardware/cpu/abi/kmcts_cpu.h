/* The calling convention between the CPU worker and a kernel (reference or variant).
 * Every kernel is a shared object exporting kmcts_kernel; the worker passes the problem's
 * inputs and outputs in problem.json order. Kernels must not keep pointers between calls. */
#ifndef KMCTS_CPU_H
#define KMCTS_CPU_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum kmcts_dtype { KMCTS_F32 = 0, KMCTS_F64 = 1 };

typedef struct kmcts_tensor {
  void* data;        /* contiguous, row-major */
  int32_t dtype;     /* enum kmcts_dtype */
  int32_t ndim;
  int64_t shape[8];
  int64_t numel;
} kmcts_tensor;

/* Inputs are read-only (the worker checks they are unmodified); every output element
 * must be written (outputs are poisoned with NaN before each call). */
void kmcts_kernel(const kmcts_tensor* inputs, int32_t n_inputs, kmcts_tensor* outputs, int32_t n_outputs);

#ifdef __cplusplus
}
#endif
#endif
