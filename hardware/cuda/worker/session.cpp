#include "hardware/cuda/worker/session.hpp"

#include "hardware/cuda/worker/gpu_check_kernels.hpp"

#include <dlfcn.h>

#include <cstring>
#include <fstream>
#include <sstream>

namespace kmcts::worker {
namespace {

CudaKernelFn load(const std::string& path, bool candidate) {
  const char* who = candidate ? "candidate" : "reference";
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_LOCAL | RTLD_NOW);
  if (!handle) {
    const char* why = dlerror();
    throw LoadError(candidate, std::string(who) + " cannot be loaded: " + (why ? why : "unknown dlopen error"));
  }
  void* symbol = dlsym(handle, "kmcts_cuda_kernel");
  if (!symbol)
    throw LoadError(candidate, std::string(who) +
                                   " does not export kmcts_cuda_kernel (it must be extern \"C\", as declared in kmcts_cuda.h)");
  CudaKernelFn fn;
  static_assert(sizeof fn == sizeof symbol);
  std::memcpy(&fn, &symbol, sizeof fn);
  return fn;
}

std::string read_binary(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

int attribute(cudaDeviceAttr what, int device) {
  int value = 0;
  return cudaDeviceGetAttribute(&value, what, device) == cudaSuccess ? value : 0;
}

}  // namespace

CudaPlan CudaPlan::from_json(const nlohmann::json& j) {
  CudaPlan p;
  p.device = j.at("device").get<int>();
  p.flush_bytes = j.at("flush_bytes").get<size_t>();
  p.min_clock_ratio = j.at("min_clock_ratio").get<double>();
  p.event_samples = j.at("event_samples").get<int>();
  p.short_kernel_ns = j.at("short_kernel_ns").get<double>();
  p.protocol = j.value("protocol", std::string("kmcts"));
  if (p.protocol != "kmcts" && p.protocol != "kernelbench" && p.protocol != "profile")
    throw std::invalid_argument("unknown protocol " + p.protocol);
  if (p.device < 0 || p.event_samples < 0 || p.min_clock_ratio < 0 || p.min_clock_ratio > 1)
    throw std::invalid_argument("cuda plan out of range");
  return p;
}

Session::Session(const Job& job, const CudaPlan& plan) : plan_(plan) {
  // CUPTI's activity API first, before the context exists; a profiler brings its own.
  if (plan.protocol != "profile") timer_.emplace();
  cuda_check(cudaSetDevice(plan.device), "cudaSetDevice(" + std::to_string(plan.device) + ")");
  cuda_check(cudaFree(nullptr), "creating the CUDA context");
  size_t persisting_found = 0;
  cudaDeviceGetLimit(&persisting_found, cudaLimitPersistingL2CacheSize);
  // Nothing may stay pinned in L2 between samples (REFERENCE.md): the limit goes to 0 for
  // this context, and any call that raises it again is rejected.
  cuda_check(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0), "zeroing the persisting L2 limit");
  cuda_check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  checks_.emplace();
  if (timer_) timer_->exempt(cuda::ActivityTimer::stream_id(checks_->stream()), kmcts_gpu_checks::kKernelMarker);
  cuda_check(cudaEventCreate(&start_), "cudaEventCreate");
  cuda_check(cudaEventCreate(&stop_), "cudaEventCreate");
  reference_ = load(job.reference, false);
  candidate_ = load(job.candidate, true);
  if (timer_) {  // under a profiler CUPTI belongs to it: no trace, so no audit either
    launch_stream_id_ = cuda::ActivityTimer::stream_id(stream_);
    audit_.emplace(launch_stream_id_, read_binary(job.candidate));
  }

  cudaDeviceProp props{};
  cuda_check(cudaGetDeviceProperties(&props, plan.device), "cudaGetDeviceProperties");
  const int d = plan.device;
  const double memory_khz = attribute(cudaDevAttrMemoryClockRate, d), bus_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, d);
  const double sm_khz = attribute(cudaDevAttrClockRate, d);
  device_ = {{"index", d},
             {"name", props.name},
             {"compute_capability", std::to_string(props.major) + "." + std::to_string(props.minor)},
             {"sms", props.multiProcessorCount},
             {"l2_bytes", props.l2CacheSize},
             {"persisting_l2_limit_found", persisting_found},
             {"memory_clock_khz", memory_khz},
             {"memory_bus_bits", bus_bits},
             {"sm_clock_khz", sm_khz},
             // Double data rate: two transfers per memory clock.
             {"peak_bytes_per_s_estimate", 2.0 * memory_khz * 1e3 * bus_bits / 8},
             // 128 fp32 lanes per SM on sm_80+ (an upper bound elsewhere), one FMA = 2 flops.
             {"peak_fp32_flops_estimate", props.multiProcessorCount * 128.0 * 2 * sm_khz * 1e3}};
}

Session::~Session() {
  if (start_) cudaEventDestroy(start_);
  if (stop_) cudaEventDestroy(stop_);
  if (stream_) cudaStreamDestroy(stream_);
}

cuda::ActivitySample Session::call(bool candidate, DeviceTensors& in, DeviceTensors& out, const std::string& phase) {
  CudaKernelFn fn = candidate ? candidate_ : reference_;
  cuda::ActivitySample sample;
  try {
    if (!timer_) {  // the profile protocol: the call alone
      cuda_check(cudaDeviceSynchronize(), "before the call");
      fn(in.views(), in.count(), out.views(), out.count(), stream_);
      cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
      return sample;
    }
    sample = timer_->measure([&] { fn(in.views(), in.count(), out.views(), out.count(), stream_); });
  } catch (const std::exception& e) {
    throw CallFault(candidate, phase, e.what());
  }
  if (!candidate) return sample;
  candidate_kernels_.insert(sample.kernel_names.begin(), sample.kernel_names.end());
  cuda::CallTrace trace;
  trace.streams = sample.streams;
  trace.kernels = sample.kernel_names;
  trace.stray_kernels = sample.stray_before + sample.stray_after;
  trace.stray_names = sample.stray_names;
  size_t limit = 0;
  cudaDeviceGetLimit(&limit, cudaLimitPersistingL2CacheSize);
  trace.persisting_l2_limit = limit;
  cudaStreamAttrValue window{};
  if (cudaStreamGetAttribute(stream_, cudaStreamAttributeAccessPolicyWindow, &window) == cudaSuccess)
    trace.access_policy_bytes = window.accessPolicyWindow.num_bytes;
  last_trace_ = cuda::to_json(trace);
  last_trace_["launch_stream"] = launch_stream_id_;
  if (auto violation = audit_->check(trace)) throw Rejected(*violation, phase, last_trace_);
  return sample;
}

double Session::event_ns(bool candidate, DeviceTensors& in, DeviceTensors& out) {
  CudaKernelFn fn = candidate ? candidate_ : reference_;
  cuda_check(cudaDeviceSynchronize(), "before an event sample");
  cuda_check(cudaEventRecord(start_, stream_), "cudaEventRecord");
  fn(in.views(), in.count(), out.views(), out.count(), stream_);
  cuda_check(cudaEventRecord(stop_, stream_), "cudaEventRecord");
  const cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) throw CallFault(candidate, "events", std::string("cudaDeviceSynchronize: ") + cudaGetErrorString(e));
  float ms = 0;
  cuda_check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
  return ms * 1e6;
}

}  // namespace kmcts::worker
