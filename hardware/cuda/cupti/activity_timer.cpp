#include "hardware/cuda/cupti/activity_timer.hpp"

#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>

namespace kmcts::cuda {
namespace {

struct Record {
  CUpti_ActivityKind kind;
  uint64_t start, end;
  uint32_t stream;
  uint32_t correlation = 0;
  uint64_t graph_node = 0;
  KernelLaunch launch;  // kernels only: name, geometry and resources
};

std::mutex g_mutex;
std::vector<Record> g_records;  // completed buffers land here (CUPTI's thread)
// Buffers come back here for reuse: every sample forces two flushes, and a fresh 8 MiB
// allocation (and its page faults) per flush would cost more than the sample's kernels.
std::vector<uint8_t*> g_spare_buffers;

constexpr size_t kBufferBytes = 8 << 20;
constexpr size_t kAlign = 8;

void CUPTIAPI on_buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  {
    std::lock_guard lock(g_mutex);
    if (!g_spare_buffers.empty()) {
      *buffer = g_spare_buffers.back();
      g_spare_buffers.pop_back();
    } else {
      *buffer = nullptr;
    }
  }
  if (!*buffer) *buffer = static_cast<uint8_t*>(std::aligned_alloc(kAlign, kBufferBytes));
  *size = kBufferBytes;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI on_buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  std::vector<Record> got;
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      case CUPTI_ACTIVITY_KIND_KERNEL: {
        auto* k = reinterpret_cast<CUpti_ActivityKernel10*>(record);
        KernelLaunch launch{.name = k->name ? k->name : "?",
                            .grid = {k->gridX, k->gridY, k->gridZ},
                            .block = {k->blockX, k->blockY, k->blockZ},
                            .registers = k->registersPerThread,
                            .smem_static = static_cast<int>(k->staticSharedMemory),
                            .smem_dynamic = static_cast<int>(k->dynamicSharedMemory),
                            .local_bytes = static_cast<int>(k->localMemoryPerThread)};
        got.push_back({record->kind, k->start, k->end, k->streamId, k->correlationId, k->graphNodeId, std::move(launch)});
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        auto* m = reinterpret_cast<CUpti_ActivityMemcpy6*>(record);
        got.push_back({record->kind, m->start, m->end, m->streamId, 0, 0, {}});
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        auto* m = reinterpret_cast<CUpti_ActivityMemset4*>(record);
        got.push_back({record->kind, m->start, m->end, m->streamId, 0, 0, {}});
        break;
      }
      default:
        break;
    }
  }
  std::lock_guard lock(g_mutex);
  g_spare_buffers.push_back(buffer);
  g_records.insert(g_records.end(), got.begin(), got.end());
}

bool is_kernel(const Record& r) {
  return r.kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || r.kind == CUPTI_ACTIVITY_KIND_KERNEL;
}

void check(CUptiResult r, const char* what) {
  if (r == CUPTI_SUCCESS) return;
  const char* text = nullptr;
  cuptiGetResultString(r, &text);
  throw std::runtime_error(std::string(what) + ": " + (text ? text : "CUPTI error"));
}

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

constexpr CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                         CUPTI_ACTIVITY_KIND_MEMSET};

}  // namespace

ActivityTimer::ActivityTimer() {
  check(cuptiActivityRegisterCallbacks(on_buffer_requested, on_buffer_completed), "cuptiActivityRegisterCallbacks");
  resume();
}

ActivityTimer::~ActivityTimer() {
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  pause();
}

void ActivityTimer::resume() {
  for (auto kind : kKinds) check(cuptiActivityEnable(kind), "cuptiActivityEnable");
}

void ActivityTimer::pause() {
  for (auto kind : kKinds) cuptiActivityDisable(kind);
}

uint32_t ActivityTimer::stream_id(void* cuda_stream) {
  uint32_t id = 0;
  CUcontext context = nullptr;
  cuCtxGetCurrent(&context);
  check(cuptiGetStreamIdEx(context, static_cast<CUstream>(cuda_stream), 0, &id), "cuptiGetStreamIdEx");
  return id;
}

void ActivityTimer::attribute(std::vector<std::string> own_roots) {
  attribution_.reset();  // CUPTI takes one subscriber: the old one goes first
  attribution_ = std::make_unique<KernelAttribution>(std::move(own_roots));
}

void ActivityTimer::exempt(uint32_t stream_id, std::string marker) {
  exempt_stream_ = stream_id;
  exempt_marker_ = std::move(marker);
}

namespace {

// Adds kernel `r` (in the window [t0, t1]) to the sample's owner sums.
void add_attributed(const KernelAttribution& attribution, ActivitySample& s, const Record& r, uint64_t t0,
                    uint64_t t1) {
  const uint64_t ns = std::min(r.end, t1) - std::max(r.start, t0);
  const KernelOrigin origin = attribution.origin(r.correlation, r.graph_node, r.launch.name);
  switch (origin.owner) {
    case KernelOwner::own:
      s.own_ns += ns, s.own_kernels++;
      break;
    case KernelOwner::library: {
      s.library_ns += ns, s.library_kernels++;
      auto& [count, total] = s.library_objects[origin.object];
      count++, total += ns;
      break;
    }
    case KernelOwner::unknown:
      s.unknown_ns += ns, s.unknown_kernels++;
      break;
  }
}

}  // namespace

ActivitySample ActivityTimer::measure(const std::function<void()>& launch) {
  auto exempted = [this](const Record& r) {
    return !exempt_marker_.empty() && r.stream == exempt_stream_ && r.launch.name.find(exempt_marker_) != std::string::npos;
  };
  check_cuda(cudaDeviceSynchronize(), "before the call");
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  ActivitySample s;
  {
    // Whatever arrived since the last window: our own memsets and copies, and any kernel
    // that ran outside a window (counted: nothing of the kernels under test should).
    std::lock_guard lock(g_mutex);
    for (const Record& r : g_records)
      if (is_kernel(r) && !exempted(r)) s.stray_before++, s.stray_names.insert(r.launch.name);
    g_records.clear();
  }
  if (attribution_) attribution_->forget_launches();  // their records were read above
  uint64_t t0 = 0, t1 = 0;
  check(cuptiGetTimestamp(&t0), "cuptiGetTimestamp");
  launch();
  const cudaError_t launch_error = cudaGetLastError();
  const cudaError_t sync_error = cudaDeviceSynchronize();
  check(cuptiGetTimestamp(&t1), "cuptiGetTimestamp");
  check_cuda(launch_error, "launch");
  check_cuda(sync_error, "cudaDeviceSynchronize");
  check(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
  s.window_ns = t1 - t0;
  std::lock_guard lock(g_mutex);
  for (const Record& r : g_records) {
    const bool kernel = is_kernel(r);
    if (kernel && exempted(r)) continue;
    if (r.end <= t0 || r.start >= t1) {
      if (kernel) s.stray_after++, s.stray_names.insert(r.launch.name);
      continue;
    }
    s.intervals.push_back({r.start, r.end});
    s.streams.insert(r.stream);
    if (r.kind == CUPTI_ACTIVITY_KIND_MEMCPY) s.memcpys++;
    else if (r.kind == CUPTI_ACTIVITY_KIND_MEMSET) s.memsets++;
    else {
      s.kernels++, s.kernel_names.insert(r.launch.name);
      s.kernel_table.add(r.launch, std::min(r.end, t1) - std::max(r.start, t0));
    }
    if (kernel && attribution_) add_attributed(*attribution_, s, r, t0, t1);
  }
  g_records.clear();
  s.attributed = attribution_ != nullptr;
  s.union_ns = union_ns(s.intervals, t0, t1);
  return s;
}

}  // namespace kmcts::cuda
