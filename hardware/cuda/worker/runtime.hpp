#pragma once
// The GPU runtime the worker and its kernel hosts are written against: CUDA's names. Built
// with KMCTS_HIP (hipcc, for AMD GPUs: issue 31) the same names stand for HIP's equivalents, so
// one worker's checks, timing loop, kernel hosts and protocol serve both vendors instead of a
// copy per vendor. Only the names the worker uses are mapped; a CUDA call added without one
// fails the HIP build (CI builds it), which is where its HIP meaning must be decided.
// What has no HIP counterpart is marked where it is used (#if KMCTS_HIP): the persisting-L2
// controls (AMD GPUs have none to reset), NVML's SM clock and CUPTI (the HIP build is timed by
// rocprofv3 from outside: hardware/hip/rocprof_trace.hpp). Messages that name a failed call
// name it as CUDA does (cudaMalloc for hipMalloc); the rest name the API by kGpuApi.
#ifdef KMCTS_HIP
#include <hip/hip_runtime.h>

// Types and constants.
#define cudaError_t hipError_t
#define cudaSuccess hipSuccess
#define cudaStream_t hipStream_t
#define cudaEvent_t hipEvent_t
#define cudaDeviceProp hipDeviceProp_t
#define cudaDeviceAttr hipDeviceAttribute_t
#define cudaDevAttrL2CacheSize hipDeviceAttributeL2CacheSize
#define cudaDevAttrMemoryClockRate hipDeviceAttributeMemoryClockRate
#define cudaDevAttrGlobalMemoryBusWidth hipDeviceAttributeMemoryBusWidth
#define cudaDevAttrClockRate hipDeviceAttributeClockRate
#define cudaIpcMemHandle_t hipIpcMemHandle_t
#define cudaIpcMemLazyEnablePeerAccess hipIpcMemLazyEnablePeerAccess
#define cudaStreamNonBlocking hipStreamNonBlocking
#define cudaMemcpyDeviceToHost hipMemcpyDeviceToHost
#define cudaMemcpyDeviceToDevice hipMemcpyDeviceToDevice
// Calls.
#define cudaGetErrorString hipGetErrorString
#define cudaGetLastError hipGetLastError
#define cudaSetDevice hipSetDevice
#define cudaFree hipFree
#define cudaMalloc hipMalloc
#define cudaMallocHost hipHostMalloc
#define cudaFreeHost hipHostFree
#define cudaMemcpy hipMemcpy
#define cudaMemcpyAsync hipMemcpyAsync
#define cudaMemsetAsync hipMemsetAsync
#define cudaDeviceSynchronize hipDeviceSynchronize
#define cudaDeviceGetAttribute hipDeviceGetAttribute
#define cudaGetDeviceProperties hipGetDeviceProperties
#define cudaDeviceGetPCIBusId hipDeviceGetPCIBusId
#define cudaStreamCreate hipStreamCreate
#define cudaStreamCreateWithFlags hipStreamCreateWithFlags
#define cudaStreamSynchronize hipStreamSynchronize
#define cudaStreamDestroy hipStreamDestroy
#define cudaEventCreate hipEventCreate
#define cudaEventRecord hipEventRecord
#define cudaEventSynchronize hipEventSynchronize
#define cudaEventElapsedTime hipEventElapsedTime
#define cudaEventDestroy hipEventDestroy
#define cudaIpcGetMemHandle hipIpcGetMemHandle
#define cudaIpcOpenMemHandle hipIpcOpenMemHandle
#else
#include <cuda_runtime.h>
#endif

namespace kmcts::worker {
#ifdef KMCTS_HIP
inline constexpr bool kHip = true;
#else
inline constexpr bool kHip = false;
#endif
inline constexpr const char* kGpuApi = kHip ? "HIP" : "CUDA";
inline constexpr const char* kWorkerBinary = kHip ? "kmcts-hip-worker" : "kmcts-cuda-worker";
inline constexpr const char* kHostBinary = kHip ? "kmcts-hip-host" : "kmcts-cuda-host";
}  // namespace kmcts::worker
