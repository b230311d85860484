#include "hardware/cuda/cupti/kernel_attribution.hpp"

#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <limits.h>
#include <stdlib.h>

#include <array>
#include <atomic>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

namespace kmcts::cuda {

using OriginIndex = uint32_t;
constexpr OriginIndex kNone = 0;  // origins_[0] is the unknown origin

struct KernelAttribution::State {
  std::vector<std::string> roots;
  CUpti_SubscriberHandle subscriber = nullptr;
  std::string own_object;  // the object holding this code (the timer library): never a launcher
  mutable std::mutex mutex;
  std::deque<KernelOrigin> origins{KernelOrigin{}};  // interned: the maps hold indices
  std::unordered_map<std::string, OriginIndex> origin_index;
  std::unordered_map<uint32_t, OriginIndex> launches;     // correlation id -> origin
  std::unordered_map<uint64_t, OriginIndex> graph_nodes;  // graph node id -> origin
  std::unordered_map<const void*, OriginIndex> by_function;  // host stub or CUfunction -> origin
  std::atomic<uint64_t> runtime{0}, driver{0};

  OriginIndex intern(const std::string& object_path);
  OriginIndex of_function(const void* function, bool is_host_stub);
};

namespace {

// The origin of the launch this thread is in (between a launch's enter and exit callbacks):
// a driver launch the runtime makes inside it, and a graph node its capture creates, inherit it.
thread_local OriginIndex t_current = kNone;

std::string basename_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string canonical(const char* path) {
  std::array<char, PATH_MAX> out{};
  return realpath(path, out.data()) ? std::string(out.data()) : std::string(path);
}

bool is_cuda_plumbing(const std::string& base) {
  for (const char* prefix : {"libcuda.so", "libcudart", "libcupti", "libkmcts_kb_timer"})
    if (base.rfind(prefix, 0) == 0) return true;
  return false;
}

// The first object on this thread's stack outside CUDA's libraries, CUPTI and ours: the code
// that asked for the launch.
std::string launching_object(const std::string& own_object) {
  std::array<void*, 64> frames{};
  const int n = backtrace(frames.data(), static_cast<int>(frames.size()));
  for (int i = 0; i < n; ++i) {
    Dl_info info{};
    if (dladdr(frames[i], &info) == 0 || info.dli_fname == nullptr || info.dli_fname[0] == '\0') continue;
    const std::string path = info.dli_fname;
    if (path == own_object || is_cuda_plumbing(basename_of(path))) continue;
    return canonical(info.dli_fname);
  }
  return "";
}

// The leading fields of the launch APIs' parameter blocks, as CUPTI's generated_cuda_meta.h and
// generated_cuda_runtime_api_meta.h lay them out (those headers do not build beside cuda.h in
// one translation unit).
struct FunctionFirst {
  const void* function;  // cudaLaunchKernel(func, ...), cuLaunchKernel(f, ...), the cooperative ones
};
struct ConfigThenFunction {
  const void* config;
  const void* function;  // cudaLaunchKernelExC(config, func, ...), cuLaunchKernelEx(config, f, ...)
};

struct LaunchedFunction {
  const void* function = nullptr;  // nullptr: a launch API whose parameters we do not read
  bool host_stub = false;          // code in the launching object (dladdr names it), or a handle
};

LaunchedFunction runtime_function(CUpti_CallbackId cbid, const void* params) {
  switch (cbid) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000:
      return {static_cast<const FunctionFirst*>(params)->function, true};
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060:
      return {static_cast<const ConfigThenFunction*>(params)->function, true};
#if CUDA_VERSION >= 13000
    // What nvcc 13 compiles <<<...>>> to: __cudaLaunchKernel(cudaKernel_t, ...), a handle, not
    // code: resolved by the stack once per handle.
    case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000:
    case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000:
      return {static_cast<const FunctionFirst*>(params)->function, false};
#endif
    default:
      return {};
  }
}

const void* driver_function(CUpti_CallbackId cbid, const void* params) {
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
      return static_cast<const FunctionFirst*>(params)->function;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
      return static_cast<const ConfigThenFunction*>(params)->function;
    default:
      return nullptr;
  }
}

constexpr CUpti_CallbackId kRuntimeLaunches[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
#if CUDA_VERSION >= 13000
    CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
    CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000,
#endif
};
constexpr CUpti_CallbackId kDriverLaunches[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,           CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,         CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
};

void on_launch(KernelAttribution::State& s, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
               const CUpti_CallbackData& cb) {
  if (cb.callbackSite == CUPTI_API_EXIT) {
    t_current = static_cast<OriginIndex>(*cb.correlationData);  // the enclosing launch's, if any
    return;
  }
  *cb.correlationData = t_current;
  OriginIndex origin = t_current;  // a driver launch made inside a runtime launch: the runtime's
  if (origin == kNone) {
    const bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
    (runtime ? s.runtime : s.driver).fetch_add(1, std::memory_order_relaxed);
    const LaunchedFunction f =
        runtime ? runtime_function(cbid, cb.functionParams) : LaunchedFunction{driver_function(cbid, cb.functionParams)};
    origin = f.function ? s.of_function(f.function, f.host_stub) : s.intern(launching_object(s.own_object));
  }
  {
    std::lock_guard lock(s.mutex);
    s.launches[cb.correlationId] = origin;
  }
  t_current = origin;
}

void on_graph_node(KernelAttribution::State& s, CUpti_CallbackId cbid, const CUpti_ResourceData& data) {
  const auto* graph = static_cast<const CUpti_GraphData*>(data.resourceDescriptor);
  if (graph == nullptr || graph->node == nullptr) return;
  uint64_t node = 0, original = 0;
  if (cuptiGetGraphNodeId(graph->node, &node) != CUPTI_SUCCESS) return;
  const bool cloned = cbid != CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED;
  if (cloned && (graph->originalNode == nullptr || cuptiGetGraphNodeId(graph->originalNode, &original) != CUPTI_SUCCESS))
    return;
  std::lock_guard lock(s.mutex);
  if (!cloned) {
    if (t_current != kNone) s.graph_nodes[node] = t_current;  // captured from a launch we saw
  } else {                                                     // cloned (instantiation, graph copies)
    const auto it = s.graph_nodes.find(original);
    if (it != s.graph_nodes.end()) s.graph_nodes[node] = it->second;
  }
}

void CUPTIAPI on_callback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  auto& s = *static_cast<KernelAttribution::State*>(userdata);
  if (domain == CUPTI_CB_DOMAIN_RESOURCE)
    on_graph_node(s, cbid, *static_cast<const CUpti_ResourceData*>(data));
  else
    on_launch(s, domain, cbid, *static_cast<const CUpti_CallbackData*>(data));
}

void check(CUptiResult r, const char* what) {
  if (r == CUPTI_SUCCESS) return;
  const char* text = nullptr;
  cuptiGetResultString(r, &text);
  throw std::runtime_error(std::string(what) + ": " + (text ? text : "CUPTI error"));
}

}  // namespace

OriginIndex KernelAttribution::State::intern(const std::string& object_path) {
  std::lock_guard lock(mutex);
  const auto it = origin_index.find(object_path);
  if (it != origin_index.end()) return it->second;
  const KernelOwner owner = owner_of_object(object_path, roots);
  origins.push_back({owner, owner == KernelOwner::unknown ? std::string() : basename_of(object_path)});
  const auto index = static_cast<OriginIndex>(origins.size() - 1);
  origin_index.emplace(object_path, index);
  return index;
}

OriginIndex KernelAttribution::State::of_function(const void* function, bool is_host_stub) {
  {
    std::lock_guard lock(mutex);
    const auto it = by_function.find(function);
    if (it != by_function.end()) return it->second;
  }
  std::string object;
  Dl_info info{};
  if (is_host_stub && dladdr(function, &info) != 0 && info.dli_fname != nullptr && info.dli_fname[0] != '\0')
    object = canonical(info.dli_fname);
  else
    object = launching_object(own_object);  // a CUfunction is a handle, not code: ask the stack, once
  const OriginIndex index = intern(object);
  std::lock_guard lock(mutex);
  by_function.emplace(function, index);
  return index;
}

KernelAttribution::KernelAttribution(std::vector<std::string> own_roots) : state_(std::make_unique<State>()) {
  state_->roots = std::move(own_roots);
  Dl_info self{};
  if (dladdr(reinterpret_cast<const void*>(&on_callback), &self) != 0 && self.dli_fname) state_->own_object = self.dli_fname;
  std::array<void*, 4> warm{};
  backtrace(warm.data(), static_cast<int>(warm.size()));  // loads the unwinder now, not inside a launch
  check(cuptiSubscribe(&state_->subscriber, on_callback, state_.get()), "cuptiSubscribe");
  try {
    for (CUpti_CallbackId id : kRuntimeLaunches)
      check(cuptiEnableCallback(1, state_->subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, id), "cuptiEnableCallback (runtime)");
    for (CUpti_CallbackId id : kDriverLaunches)
      check(cuptiEnableCallback(1, state_->subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id), "cuptiEnableCallback (driver)");
    for (CUpti_CallbackId id : {CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED})
      check(cuptiEnableCallback(1, state_->subscriber, CUPTI_CB_DOMAIN_RESOURCE, id), "cuptiEnableCallback (graphs)");
  } catch (...) {
    cuptiUnsubscribe(state_->subscriber);
    throw;
  }
}

KernelAttribution::~KernelAttribution() {
  if (state_ && state_->subscriber) cuptiUnsubscribe(state_->subscriber);
}

KernelOrigin KernelAttribution::origin(uint32_t correlation_id, uint64_t graph_node_id,
                                       const std::string& kernel_name) const {
  std::lock_guard lock(state_->mutex);
  OriginIndex index = kNone;
  if (graph_node_id != 0) {
    const auto it = state_->graph_nodes.find(graph_node_id);
    if (it != state_->graph_nodes.end()) index = it->second;
  } else {
    const auto it = state_->launches.find(correlation_id);
    if (it != state_->launches.end()) index = it->second;
  }
  // An index out of range: an exit callback whose enter this subscriber never saw (callbacks
  // enabled while another thread was inside a launch) left t_current undefined.
  return kernel_origin(index < state_->origins.size() ? state_->origins[index] : state_->origins[kNone], kernel_name);
}

void KernelAttribution::forget_launches() {
  std::lock_guard lock(state_->mutex);
  state_->launches.clear();
}

uint64_t KernelAttribution::runtime_launches() const { return state_->runtime.load(); }
uint64_t KernelAttribution::driver_launches() const { return state_->driver.load(); }

}  // namespace kmcts::cuda
