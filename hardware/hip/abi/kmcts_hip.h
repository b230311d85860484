/* The calling convention between a HIP worker and a kernel (reference or variant): the CUDA
 * ABI (hardware/cuda/abi/kmcts_cuda.h) with HIP's stream. Every kernel is a shared object built
 * by hipcc that exports kmcts_hip_kernel. The tensors are the CPU ABI's descriptors
 * (kmcts_cpu.h) with `data` in device memory of the current device, in problem.json order.
 *
 * The rules are the CUDA ABI's:
 *  - enqueue all work on `stream` and return; the host synchronises. Work on any other stream
 *    or queue, or work still arriving after the call and its synchronisation, is rejected;
 *  - compute: launching kernels the shared object does not define (a library call such as
 *    rocBLAS) is rejected;
 *  - inputs are read-only; every output element must be written (outputs are poisoned with
 *    NaN before every call, also during timing);
 *  - keep no state between calls.
 * AMD's CDNA GPUs (MI200: gfx90a, MI300: gfx942) run 64-lane wavefronts: code that assumes a
 * 32-lane warp must say so or use the wavefront size. */
#ifndef KMCTS_HIP_H
#define KMCTS_HIP_H
#include <hip/hip_runtime.h>

#include "kmcts_cpu.h"

#ifdef __cplusplus
extern "C" {
#endif

void kmcts_hip_kernel(const kmcts_tensor* inputs, int32_t n_inputs, kmcts_tensor* outputs, int32_t n_outputs,
                      hipStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
