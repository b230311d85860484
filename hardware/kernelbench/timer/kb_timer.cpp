// kb_timer.h over ActivityTimer and the worker's L2 flush, for the KernelBench harness.
#include "hardware/kernelbench/timer/kb_timer.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "hardware/cuda/cupti/activity_timer.hpp"

namespace {

std::unique_ptr<kmcts::cuda::ActivityTimer> g_timer;
void* g_flush = nullptr;
uint64_t g_flush_bytes = 0;
unsigned char g_flush_value = 0;
std::string g_library_objects;  // the last sample's, as kmcts_kb_timer_library_objects gives them
std::string g_kernel_table = "[]";  // the last sample's, as kmcts_kb_timer_kernel_table gives it

int fail(const std::string& what, char* error, int error_len) {
  if (error != nullptr && error_len > 0) {
    std::strncpy(error, what.c_str(), static_cast<size_t>(error_len) - 1);
    error[error_len - 1] = '\0';
  }
  return -1;
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

}  // namespace

extern "C" int kmcts_kb_timer_open(uint64_t flush_bytes, char* error, int error_len) {
  try {
    if (g_timer) return 0;
    int device = 0, l2 = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device), "cudaDeviceGetAttribute");
    g_flush_bytes = flush_bytes ? flush_bytes : std::max<uint64_t>(2ull * static_cast<uint64_t>(l2), 128ull << 20);
    check(cudaMalloc(&g_flush, g_flush_bytes), "cudaMalloc of the L2 flush buffer");
    g_timer = std::make_unique<kmcts::cuda::ActivityTimer>();
    return 0;
  } catch (const std::exception& e) {
    return fail(e.what(), error, error_len);
  }
}

extern "C" int kmcts_kb_timer_flush(char* error, int error_len) {
  try {
    if (!g_timer) throw std::runtime_error("kmcts_kb_timer_open was not called");
    check(cudaMemset(g_flush, ++g_flush_value, g_flush_bytes), "the L2 flush");
    check(cudaCtxResetPersistingL2Cache(), "cudaCtxResetPersistingL2Cache");
    check(cudaDeviceSynchronize(), "after the L2 flush");
    return 0;
  } catch (const std::exception& e) {
    return fail(e.what(), error, error_len);
  }
}

extern "C" int kmcts_kb_timer_measure(kmcts_kb_launch launch, kmcts_kb_sample* out, char* error, int error_len) {
  try {
    if (!g_timer) throw std::runtime_error("kmcts_kb_timer_open was not called");
    const kmcts::cuda::ActivitySample s = g_timer->measure([launch] { launch(); });
    *out = kmcts_kb_sample{s.union_ns,
                           s.window_ns,
                           s.kernels,
                           s.memcpys,
                           s.memsets,
                           static_cast<int32_t>(s.streams.size()),
                           s.stray_before,
                           s.stray_after,
                           s.own_ns,
                           s.library_ns,
                           s.unknown_ns,
                           s.own_kernels,
                           s.library_kernels,
                           s.unknown_kernels,
                           s.attributed ? 1 : 0};
    g_kernel_table = s.kernel_table.to_json().dump();
    g_library_objects.clear();
    for (const auto& [object, sums] : s.library_objects)
      g_library_objects += object + " " + std::to_string(sums.first) + " " + std::to_string(sums.second) + "\n";
    return 0;
  } catch (const std::exception& e) {
    return fail(e.what(), error, error_len);
  }
}

extern "C" int kmcts_kb_timer_attribute(const char* own_roots, char* error, int error_len) {
  try {
    if (!g_timer) throw std::runtime_error("kmcts_kb_timer_open was not called");
    std::vector<std::string> roots;
    std::string all = own_roots ? own_roots : "";
    for (size_t start = 0; start <= all.size();) {
      const size_t end = std::min(all.find(':', start), all.size());
      if (end > start) roots.push_back(all.substr(start, end - start));
      start = end + 1;
    }
    g_timer->attribute(std::move(roots));
    return 0;
  } catch (const std::exception& e) {
    return fail(e.what(), error, error_len);
  }
}

extern "C" int kmcts_kb_timer_library_objects(char* out, int out_len) {
  if (out == nullptr || out_len <= 0 || g_library_objects.size() >= static_cast<size_t>(out_len)) return -1;
  std::memcpy(out, g_library_objects.c_str(), g_library_objects.size() + 1);
  return static_cast<int>(g_library_objects.size());
}

extern "C" int kmcts_kb_timer_kernel_table(char* out, int out_len) {
  if (out == nullptr || out_len <= 0 || g_kernel_table.size() >= static_cast<size_t>(out_len)) return -1;
  std::memcpy(out, g_kernel_table.c_str(), g_kernel_table.size() + 1);
  return static_cast<int>(g_kernel_table.size());
}

extern "C" uint64_t kmcts_kb_timer_flush_bytes(void) { return g_flush_bytes; }
