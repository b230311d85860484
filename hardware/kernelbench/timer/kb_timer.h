/* The CUPTI timing of kmcts (hardware/cuda/cupti/activity_timer.hpp) for the KernelBench
   harness in Python (ctypes): the union of every kernel, memcpy and memset interval on any
   stream between a timestamp before the call and one after cudaDeviceSynchronize(), and the
   kernels that ran outside any window (work escaping it). One timer per process.
   Every function returns 0 on success, or -1 with the reason in `error`. */
#ifndef KMCTS_KB_TIMER_H
#define KMCTS_KB_TIMER_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  uint64_t union_ns;    /* the sample's GPU time */
  uint64_t window_ns;   /* launch to synchronised, CPU side */
  int32_t kernels, memcpys, memsets, streams;
  int32_t stray_before; /* kernels that ran between the previous window and this one */
  int32_t stray_after;  /* kernels of this call that ran after its window */
  /* With attribution on (kmcts_kb_timer_attribute): the window's kernels' summed durations and
     counts by owner: the code under test's own, a library's, or unknown (no launch seen). */
  uint64_t own_ns, library_ns, unknown_ns;
  int32_t own_kernels, library_kernels, unknown_kernels;
  int32_t attributed;   /* 1 when the sums above were taken */
} kmcts_kb_sample;

typedef void (*kmcts_kb_launch)(void);

/* CUPTI activity tracing on for this process, and a flush buffer of `flush_bytes` on the
   current device (0 = max(2 x L2, 128 MiB)). */
int kmcts_kb_timer_open(uint64_t flush_bytes, char* error, int error_len);
/* Evicts the L2 with a cudaMemset (a memset, never a stray kernel) and resets persisting lines. */
int kmcts_kb_timer_flush(char* error, int error_len);
/* Synchronises, calls `launch`, synchronises, and fills `out`. */
int kmcts_kb_timer_measure(kmcts_kb_launch launch, kmcts_kb_sample* out, char* error, int error_len);
/* Attributes every later sample's kernels (hardware/cuda/cupti/kernel_attribution.hpp): a kernel
   launched from a shared object under one of `own_roots` (paths separated by ':') is the code
   under test's own; every other launch is a library's. */
int kmcts_kb_timer_attribute(const char* own_roots, char* error, int error_len);
/* The last sample's library kernels by launching object, "object count ns" lines; the length
   written (without the terminating 0), or -1 when `out` is too short. */
int kmcts_kb_timer_library_objects(char* out, int out_len);
/* The last sample's kernels per launch (name, grid, block, registers, shared and local memory;
   calls and ns inside the window) as the JSON list of hardware/cuda/kernel_table.hpp; the length
   written (without the terminating 0), or -1 when `out` is too short. */
int kmcts_kb_timer_kernel_table(char* out, int out_len);
/* Bytes of the flush buffer. */
uint64_t kmcts_kb_timer_flush_bytes(void);

#ifdef __cplusplus
}
#endif
#endif
