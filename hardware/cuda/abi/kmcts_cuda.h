/* The calling convention between the CUDA worker and a kernel (reference or variant).
 * Every kernel is a shared object built by nvcc that exports kmcts_cuda_kernel. The tensors
 * are the CPU ABI's descriptors (kmcts_cpu.h) with `data` in device memory of the current
 * device, in problem.json order.
 *
 * The kernel runs in a process of its own (kmcts-cuda-host), never in the worker that checks it;
 * what it prints goes to stderr, and fds 0 and 3 carry that process's messages.
 * Rules the worker checks (a breach is a rejected candidate, with the reason recorded):
 *  - enqueue all work on `stream` and return; the host synchronises. Work on any other
 *    stream, or work still arriving after the call and its synchronisation, is rejected;
 *  - compute: launching kernels the shared object does not define (a library call such as
 *    cuBLAS) is rejected;
 *  - inputs are read-only; every output element must be written (outputs are poisoned with
 *    NaN before every call, also during timing);
 *  - keep no state between calls (no cached results; no persisting-L2 settings).
 * A kernel may allocate scratch memory, but it is timed as part of the call. */
#ifndef KMCTS_CUDA_H
#define KMCTS_CUDA_H
#include <cuda_runtime.h>

#include "kmcts_cpu.h"

#ifdef __cplusplus
extern "C" {
#endif

void kmcts_cuda_kernel(const kmcts_tensor* inputs, int32_t n_inputs, kmcts_tensor* outputs, int32_t n_outputs,
                       cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
