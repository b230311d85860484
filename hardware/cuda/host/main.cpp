// kmcts-cuda-host --device N --kernel PATH [--no-tracing]: runs one kernel (the reference or a
// candidate) for the trusted CUDA worker, which starts one host per kernel and never loads
// either kernel itself. The worker owns every tensor; the host maps the buffers it is given
// (CUDA IPC: inputs and outputs only, never the pristine copies or the expected outputs),
// calls the kernel on its own stream inside a CUPTI window, and replies with what CUPTI saw.
// A candidate that takes this process over can report what it likes: the worker spans each
// call itself and checks the reports (hardware/cuda/timing_bound.hpp), and checks every output
// on its own copies. Requests come one JSON line at a time on fd 0, replies go on fd 3
// (fd 1 is pointed at stderr, so what a kernel prints cannot be mistaken for a reply):
//   {"op":"bind","key":K,"arenas":[{"id":A,"handle":HEX}],"inputs":[T...],"outputs":[T...]}
//       T = {"arena":A,"offset":BYTES,"dtype":D,"shape":[...]}          -> {"ok":true}
//   {"op":"call","key":K}   -> {"sample":{...},"persisting_l2_limit":N,"access_policy_bytes":N}
//   {"op":"event","key":K}  -> {"event_ns":X}   (CUDA events on the launch stream, tracing paused)
//   {"op":"pause"}          -> {"ok":true}      (tracing off for good)
// A CUDA error in a call replies {"fault":MESSAGE} and ends the host (errors are sticky).
// Built for HIP (KMCTS_HIP: kmcts-hip-host, loading kmcts_hip_kernel) there is no CUPTI: the
// worker and its hosts run under rocprofv3, whose trace times each call afterwards inside the
// window the worker itself records around the request (session.hpp); a call's sample here is
// only provisional (the host's synchronised window, for the stopping rule).
// The first reply says whether the kernel loaded: {"ready":true,"launch_stream":ID} or
// {"load_error":MESSAGE}; any other failure {"error":MESSAGE}.
#include "hardware/cuda/worker/runtime.hpp"
#include <sys/prctl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hardware/cuda/cupti/activity_timer.hpp"
#include "hardware/cuda/cupti/sample_json.hpp"
#include "hardware/worker/host_serve.hpp"
#ifdef KMCTS_HIP
#include "kmcts_hip.h"
#define KMCTS_KERNEL_SYMBOL "kmcts_hip_kernel"
#define KMCTS_KERNEL_HEADER "kmcts_hip.h"
#else
#include "kmcts_cuda.h"
#include <cuda_profiler_api.h>
#define KMCTS_KERNEL_SYMBOL "kmcts_cuda_kernel"
#define KMCTS_KERNEL_HEADER "kmcts_cuda.h"
#endif

namespace {

using nlohmann::json;
using KernelFn = void (*)(const kmcts_tensor*, int32_t, kmcts_tensor*, int32_t, cudaStream_t);

void reply(const json& j) { kmcts::worker::send_reply(j); }
[[noreturn]] void reply_and_exit(const json& j, int code) { kmcts::worker::send_reply_and_exit(j, code); }

void check(cudaError_t e, const std::string& what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

cudaIpcMemHandle_t handle_from_hex(const std::string& hex) {
  cudaIpcMemHandle_t h{};
  if (hex.size() != 2 * sizeof h.reserved) throw std::runtime_error("bad IPC handle");
  for (size_t i = 0; i < sizeof h.reserved; ++i)
    h.reserved[i] = static_cast<char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  return h;
}

struct Binding {
  std::vector<kmcts_tensor> inputs, outputs;
};

class Host {
 public:
  Host(int device, const std::string& kernel, bool tracing) {
#ifndef KMCTS_HIP
    if (tracing) timer_.emplace();  // before the context exists (activity_timer.hpp)
#else
    (void)tracing;  // rocprofv3 traces from outside, or a profiler does
#endif
    check(cudaSetDevice(device), "cudaSetDevice");
    check(cudaFree(nullptr), std::string("creating the ") + kmcts::worker::kGpuApi + " context");
#ifndef KMCTS_HIP
    check(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0), "zeroing the persisting L2 limit");
#endif
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cudaEventCreate(&start_), "cudaEventCreate");
    check(cudaEventCreate(&stop_), "cudaEventCreate");
    kmcts::worker::confine_kernel_host();  // every thread the runtime made so far, and later ones
    fn_ = kmcts::worker::load_kernel<KernelFn>(kernel, KMCTS_KERNEL_SYMBOL, KMCTS_KERNEL_HEADER);
  }

  json ready() const {
#ifdef KMCTS_HIP
    return {{"ready", true}, {"launch_stream", 0}};  // its queue is read from the trace
#else
    return {{"ready", true}, {"launch_stream", timer_ ? kmcts::cuda::ActivityTimer::stream_id(stream_) : 0}};
#endif
  }

  json serve(const json& request) {
    const std::string op = request.at("op").get<std::string>();
    if (op == "bind") return bind(request);
    if (op == "pause") {
#ifndef KMCTS_HIP
      if (timer_) timer_->pause();
#endif
      return {{"ok", true}};
    }
    Binding& b = bindings_.at(request.at("key").get<int>());
    if (op == "call") return call(b);
    if (op == "event") return event(b);
    throw std::runtime_error("unknown op " + op);
  }

 private:
  json bind(const json& request) {
    for (const auto& a : request.at("arenas")) {
      const int id = a.at("id").get<int>();
      if (arenas_.count(id)) continue;
      void* p = nullptr;
      check(cudaIpcOpenMemHandle(&p, handle_from_hex(a.at("handle").get<std::string>()), cudaIpcMemLazyEnablePeerAccess),
            "cudaIpcOpenMemHandle");
      arenas_[id] = static_cast<char*>(p);
    }
    auto views = [&](const json& list) {
      std::vector<kmcts_tensor> out;
      for (const auto& t : list) {
        kmcts_tensor v{};
        v.dtype = t.at("dtype").get<int32_t>();
        const auto shape = t.at("shape").get<std::vector<int64_t>>();
        if (shape.size() > sizeof v.shape / sizeof v.shape[0]) throw std::runtime_error("too many dimensions");
        v.ndim = static_cast<int32_t>(shape.size());
        v.numel = 1;
        for (size_t k = 0; k < shape.size(); ++k) v.shape[k] = shape[k], v.numel *= shape[k];
        v.data = arenas_.at(t.at("arena").get<int>()) + t.at("offset").get<size_t>();
        out.push_back(v);
      }
      return out;
    };
    bindings_[request.at("key").get<int>()] = {views(request.at("inputs")), views(request.at("outputs"))};
    return {{"ok", true}};
  }

  void launch(Binding& b) {
    fn_(b.inputs.data(), static_cast<int32_t>(b.inputs.size()), b.outputs.data(), static_cast<int32_t>(b.outputs.size()),
        stream_);
  }

  json call(Binding& b) {
#ifdef KMCTS_HIP
    try {
      check(cudaDeviceSynchronize(), "before the call");
      const auto t0 = std::chrono::steady_clock::now();
      launch(b);
      check(cudaDeviceSynchronize(), "hipDeviceSynchronize");
      kmcts::cuda::ActivitySample s;  // provisional: the window, until the trace is read
      s.window_ns = s.union_ns = static_cast<uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
      return {{"sample", kmcts::cuda::sample_to_json(s)}, {"persisting_l2_limit", 0}, {"access_policy_bytes", 0}};
    } catch (const std::exception& e) {
      reply_and_exit({{"fault", e.what()}}, 3);
    }
#else
    try {
      check(cudaCtxResetPersistingL2Cache(), "cudaCtxResetPersistingL2Cache");
      kmcts::cuda::ActivitySample s;
      if (timer_) {
        s = timer_->measure([&] { launch(b); });
      } else {  // under a profiler: the call alone, the profiler's range around it (ncu
                // --profile-from-start off: the worker's draws and checks are not profiled)
        check(cudaDeviceSynchronize(), "before the call");
        check(cudaProfilerStart(), "cudaProfilerStart");
        launch(b);
        check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        check(cudaProfilerStop(), "cudaProfilerStop");
      }
      size_t limit = 0;
      cudaDeviceGetLimit(&limit, cudaLimitPersistingL2CacheSize);
      cudaStreamAttrValue window{};
      uint64_t policy = 0;
      if (cudaStreamGetAttribute(stream_, cudaStreamAttributeAccessPolicyWindow, &window) == cudaSuccess)
        policy = window.accessPolicyWindow.num_bytes;
      return {{"sample", kmcts::cuda::sample_to_json(s)}, {"persisting_l2_limit", limit}, {"access_policy_bytes", policy}};
    } catch (const std::exception& e) {
      reply_and_exit({{"fault", e.what()}}, 3);
    }
#endif
  }

  json event(Binding& b) {
    try {
      check(cudaDeviceSynchronize(), "before an event sample");
      check(cudaEventRecord(start_, stream_), "cudaEventRecord");
      launch(b);
      check(cudaEventRecord(stop_, stream_), "cudaEventRecord");
      check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
      float ms = 0;
      check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
      return {{"event_ns", ms * 1e6}};
    } catch (const std::exception& e) {
      reply_and_exit({{"fault", e.what()}}, 3);
    }
  }

#ifndef KMCTS_HIP
  std::optional<kmcts::cuda::ActivityTimer> timer_;
#endif
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  KernelFn fn_ = nullptr;
  std::map<int, char*> arenas_;
  std::map<int, Binding> bindings_;
};

}  // namespace

int main(int argc, char** argv) {
  dup2(2, 1);  // what a kernel prints goes to stderr; replies have fd 3 of their own
  int device = -1;
  std::string kernel;
  bool tracing = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--device" && i + 1 < argc) device = std::atoi(argv[++i]);
    else if (a == "--kernel" && i + 1 < argc) kernel = argv[++i];
    else if (a == "--no-tracing") tracing = false;
    else reply_and_exit({{"error", std::string("usage: ") + kmcts::worker::kHostBinary + " --device N --kernel PATH [--no-tracing]"}}, 2);
  }
  if (device < 0 || kernel.empty()) reply_and_exit({{"error", std::string(kmcts::worker::kHostBinary) + ": --device and --kernel are required"}}, 2);
  // An exec makes a process dumpable again: a sibling host of the same uid (the candidate's)
  // could otherwise read or write this one's memory and descriptors through /proc. Under a
  // profiler (--no-tracing: the profile job) it stays so, for the profiler to attach
  // (set_under_profiler).
  if (tracing) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  try {
    // One thread yet: every later one is held too. Without tracing it runs under a profiler.
    kmcts::worker::confine_host_files(kernel, kmcts::worker::kHip, /*profiled=*/!tracing);
    Host host(device, kernel, tracing);
    reply(host.ready());
    while (auto line = kmcts::worker::next_request()) reply(host.serve(json::parse(*line)));
  } catch (const std::exception& e) {
    reply_and_exit({{"error", std::string(kmcts::worker::kHostBinary) + ": " + e.what()}}, 3);
  }
  std::fflush(nullptr);
#ifdef KMCTS_HIP
  std::exit(0);  // the worker closed its requests: rocprofv3's tool writes this process's trace at exit
#else
  std::_Exit(0);  // a thread the candidate left behind dies with the process
#endif
}
