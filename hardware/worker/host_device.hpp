#pragma once
// KMCTS_HOST_DEVICE marks functions that the host compiler and nvcc or hipcc (device code) both build:
// the input distributions and the comparison rule, shared by the workers.
#if defined(__CUDACC__) || defined(__HIPCC__)
#define KMCTS_HOST_DEVICE __host__ __device__
#else
#define KMCTS_HOST_DEVICE
#endif
