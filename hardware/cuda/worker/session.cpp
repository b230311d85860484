#include "hardware/cuda/worker/session.hpp"

#include <time.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "hardware/cuda/cupti/sample_json.hpp"

namespace kmcts::worker {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string read_binary(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

/// This process's clocks now (HIP windows: rocprofv3's timestamps are on one of them).
std::pair<uint64_t, uint64_t> clocks_ns() {
  timespec mono{}, boot{};
  clock_gettime(CLOCK_MONOTONIC, &mono);
  clock_gettime(CLOCK_BOOTTIME, &boot);
  auto ns = [](const timespec& t) { return static_cast<uint64_t>(t.tv_sec) * 1000000000ull + static_cast<uint64_t>(t.tv_nsec); };
  return {ns(mono), ns(boot)};
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

Session::Session(const Job& job, const CudaPlan& plan) : plan_(plan), tracing_(plan.protocol != "profile") {
  // The hosts start first, side by side, and make their contexts while this process makes its
  // own; the reference's is not needed to profile the candidate.
  if (plan.protocol != "profile") reference_ = std::make_unique<KernelHost>(false, job.reference, plan.device, tracing_);
  candidate_ = std::make_unique<KernelHost>(true, job.candidate, plan.device, tracing_);
  cuda_check(cudaSetDevice(plan.device), "cudaSetDevice(" + std::to_string(plan.device) + ")");
  cuda_check(cudaFree(nullptr), std::string("creating the ") + kGpuApi + " context");
  size_t persisting_found = 0;
#ifndef KMCTS_HIP  // AMD GPUs have no persisting L2 lines
  cudaDeviceGetLimit(&persisting_found, cudaLimitPersistingL2CacheSize);
  // Nothing may stay pinned in L2 between samples (REFERENCE.md): each host zeroes the limit
  // for its context, and any call that raises it again is rejected.
  cuda_check(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0), "zeroing the persisting L2 limit");
#endif
  cuda_check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  checks_.emplace();
  cuda_check(cudaEventCreate(&start_), "cudaEventCreate");
  cuda_check(cudaEventCreate(&stop_), "cudaEventCreate");
  for (KernelHost* h : {reference_.get(), candidate_.get()}) {
    if (!h) continue;
    h->wait_ready();
    if (!h->load_error().empty())
      throw LoadError(h == candidate_.get(), std::string(h == candidate_.get() ? "candidate " : "reference ") + h->load_error());
  }
  if (tracing_) audit_.emplace(candidate_->launch_stream(), read_binary(job.candidate));

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
             {"peak_fp32_flops_estimate", props.multiProcessorCount * 128.0 * 2 * sm_khz * 1e3},
             {"kernel_hosts", std::string("the reference and the candidate each run in a process of their own (") + kHostBinary + ")"}};
}

Session::~Session() {
  if (start_) (void)cudaEventDestroy(start_);
  if (stop_) (void)cudaEventDestroy(stop_);
  if (stream_) (void)cudaStreamDestroy(stream_);
}

KernelHost& Session::host(bool candidate, const std::string& phase) {
  KernelHost* h = candidate ? candidate_.get() : reference_.get();
  if (!h) throw std::runtime_error("no reference host in the " + plan_.protocol + " protocol (" + phase + ")");
  return *h;
}

json Session::ask(bool candidate, const json& request, const std::string& phase) {
  json reply = host(candidate, phase).request(request, phase);
  if (reply.contains("fault"))
    throw CallFault(candidate, phase, reply["fault"].is_string() ? reply["fault"].get<std::string>() : reply["fault"].dump());
  return reply;
}

void Session::pause_tracing() {
  for (bool candidate : {false, true})
    if ((candidate ? candidate_ : reference_) && tracing_) ask(candidate, {{"op", "pause"}}, "pausing the tracing");
}

cuda::ActivitySample Session::call(bool candidate, DeviceTensors& in, DeviceTensors& out, const std::string& phase) {
  KernelHost& h = host(candidate, phase);
  const int key = h.bind(in, out);
  // Everything this process enqueued (poison, copies, the flush) is done before the call, and
  // the span starts on the GPU's clock before the request goes.
  cuda_check(cudaDeviceSynchronize(), "before a call (" + phase + ")");
  cuda_check(cudaEventRecord(start_, stream_), "cudaEventRecord");
  cuda_check(cudaEventSynchronize(start_), "cudaEventSynchronize");
  const auto t0 = Clock::now();
  const auto c0 = kHip ? clocks_ns() : std::pair<uint64_t, uint64_t>{};
  const json reply = ask(candidate, {{"op", "call"}, {"key", key}}, phase);
  const double wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  if (kHip) {
    const auto c1 = clocks_ns();
    windows_.push_back({{"candidate", candidate}, {"phase", phase}, {"mono", {c0.first, c1.first}}, {"boot", {c0.second, c1.second}}});
  }
  cuda_check(cudaEventRecord(stop_, stream_), "cudaEventRecord");
  cuda_check(cudaEventSynchronize(stop_), "cudaEventSynchronize");
  float gpu_ms = 0;
  cuda_check(cudaEventElapsedTime(&gpu_ms, start_, stop_), "cudaEventElapsedTime");

  cuda::ActivitySample sample;
  cuda::CallTrace trace;
  try {
    sample = cuda::sample_from_json(reply.at("sample"));
    trace.persisting_l2_limit = reply.at("persisting_l2_limit").get<uint64_t>();
    trace.access_policy_bytes = reply.at("access_policy_bytes").get<uint64_t>();
  } catch (const std::exception& e) {
    throw HostFailure(candidate, fmt::format("the {}'s process sent a malformed reply ({}): {}",
                                             candidate ? "candidate" : "reference", phase, e.what()));
  }
  if (!tracing_) return sample;
  const CallSpan span{wall_ms, gpu_ms, static_cast<double>(sample.window_ns) * 1e-6,
                            static_cast<double>(sample.union_ns) * 1e-6};
  if (phase == "timing") timed_[candidate ? 1 : 0].add(span);
  if (!candidate) return sample;
  candidate_kernels_.insert(sample.kernel_names.begin(), sample.kernel_names.end());
  trace.streams = sample.streams;
  trace.kernels = sample.kernel_names;
  trace.stray_kernels = sample.stray_before + sample.stray_after;
  trace.stray_names = sample.stray_names;
  last_trace_ = cuda::to_json(trace);
  last_trace_["launch_stream"] = candidate_->launch_stream();
  last_trace_["span"] = {{"wall_ms", span.wall_ms}, {"gpu_ms", span.gpu_ms}, {"window_ms", span.window_ms}, {"union_ms", span.union_ms}};
  if (auto violation = audit_->check(trace)) throw Rejected(*violation, phase, last_trace_);
  if (auto breach = check_call(span, policy_)) throw Rejected({"timing_bound", *breach}, phase, last_trace_);
  return sample;
}

json Session::host_pids() const {
  json pids = json::object();
  if (reference_) pids["reference"] = reference_->pid();
  pids["candidate"] = candidate_->pid();
  return pids;
}

json Session::finish_hosts(double timeout_s) {
  json ended = json::object();
  if (reference_) ended["reference"] = reference_->finish(timeout_s);
  ended["candidate"] = candidate_->finish(timeout_s);
  return ended;
}

void Session::check_timing_bound() {
  if (auto breach = check_totals(timed_[0], timed_[1], policy_, &bound_record_))
    throw Rejected({"timing_bound", *breach}, "timing", last_trace_);
}

double Session::event_ns(bool candidate, DeviceTensors& in, DeviceTensors& out) {
  KernelHost& h = host(candidate, "events");
  const int key = h.bind(in, out);
  cuda_check(cudaDeviceSynchronize(), "before an event sample");
  const auto c0 = kHip ? clocks_ns() : std::pair<uint64_t, uint64_t>{};
  const json reply = ask(candidate, {{"op", "event"}, {"key", key}}, "events");
  if (kHip) {
    const auto c1 = clocks_ns();
    windows_.push_back({{"candidate", candidate}, {"phase", "events"}, {"mono", {c0.first, c1.first}}, {"boot", {c0.second, c1.second}}});
  }
  if (!reply.contains("event_ns") || !reply["event_ns"].is_number())
    throw HostFailure(candidate, std::string("the ") + (candidate ? "candidate" : "reference") +
                                     "'s process sent a malformed reply (events)");
  return reply["event_ns"].get<double>();
}

}  // namespace kmcts::worker
