#include "hardware/cpu/worker/cpu_host.hpp"

#include <chrono>
#include <cstring>

#include "hardware/worker/host_serve.hpp"

namespace kmcts::worker {
namespace {

using nlohmann::json;
using KernelFn = void (*)(const kmcts_tensor*, int32_t, kmcts_tensor*, int32_t);
using Clock = std::chrono::steady_clock;

/// The host's loop, in the forked child.
void serve(const std::string& kernel, const Job& job, SharedArena& mine, const std::vector<SharedArena*>& others) {
  for (SharedArena* other : others) other->unmap();
  try {
    confine_host_files(kernel);
    confine_kernel_host();
  } catch (const std::exception& e) {
    send_reply_and_exit({{"error", e.what()}}, 3);
  }
  const auto fn = load_kernel<KernelFn>(kernel, "kmcts_kernel", "kmcts_cpu.h");
  send_reply({{"ready", true}});
  std::map<int, std::pair<std::vector<kmcts_tensor>, std::vector<kmcts_tensor>>> bound;
  auto views = [&](const json& offsets, const std::vector<TensorDesc>& descs) {
    std::vector<kmcts_tensor> out;
    for (size_t i = 0; i < descs.size(); ++i) {
      const TensorDesc& d = descs[i];
      kmcts_tensor v{};
      v.dtype = d.dtype;
      v.ndim = static_cast<int32_t>(d.shape.size());
      for (size_t k = 0; k < d.shape.size(); ++k) v.shape[k] = d.shape[k];
      v.numel = d.numel;
      v.data = mine.at(offsets.at(i).get<size_t>(), static_cast<size_t>(d.numel) * (d.dtype == KMCTS_F64 ? 8 : 4));
      out.push_back(v);
    }
    return out;
  };
  while (auto line = next_request()) {
    try {
      const json request = json::parse(*line);
      const std::string op = request.at("op").get<std::string>();
      if (op == "bind") {
        bound[request.at("key").get<int>()] = {views(request.at("inputs"), job.inputs),
                                               views(request.at("outputs"), job.outputs)};
        send_reply({{"ok", true}});
        continue;
      }
      auto& [in, out] = bound.at(request.at("key").get<int>());
      const auto t0 = Clock::now();
      fn(in.data(), static_cast<int32_t>(in.size()), out.data(), static_cast<int32_t>(out.size()));
      const auto t1 = Clock::now();
      send_reply({{"ns", std::chrono::duration<double, std::nano>(t1 - t0).count()}});
    } catch (const std::exception& e) {
      send_reply_and_exit({{"error", std::string("kernel host: ") + e.what()}}, 3);
    }
  }
}

json offsets(const SharedArena& arena, TensorSet& t) {
  json list = json::array();
  for (int32_t i = 0; i < t.count(); ++i) list.push_back(arena.offset(t.data(static_cast<size_t>(i))));
  return list;
}

}  // namespace

CpuHost::CpuHost(bool candidate, const std::string& kernel, const Job& job, SharedArena& mine,
                 const std::vector<SharedArena*>& others)
    : arena_(mine), link_(candidate, [&] { serve(kernel, job, mine, others); }) {}

bool CpuHost::ready() {
  link_.wait_ready();
  return load_error().empty();
}

int CpuHost::bind(TensorSet& in, TensorSet& out) {
  const auto id = std::make_pair(static_cast<const void*>(&in), static_cast<const void*>(&out));
  if (auto known = keys_.find(id); known != keys_.end()) return known->second;
  const int key = static_cast<int>(keys_.size());
  const json reply = link_.request(
      {{"op", "bind"}, {"key", key}, {"inputs", offsets(arena_, in)}, {"outputs", offsets(arena_, out)}}, "binding buffers");
  if (!reply.value("ok", false)) link_.gone("binding buffers", "refused: " + reply.dump().substr(0, 200));
  keys_[id] = key;
  return key;
}

double CpuHost::call(TensorSet& in, TensorSet& out, const std::string& phase) {
  const int key = bind(in, out);
  const auto t0 = Clock::now();
  const json reply = link_.request({{"op", "call"}, {"key", key}}, phase);
  const double wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  if (!reply.contains("ns") || !reply["ns"].is_number())
    link_.gone(phase, "sent a malformed reply: " + reply.dump().substr(0, 200));
  const double ns = reply["ns"].get<double>();
  const CallSpan span{wall_ms, -1, ns * 1e-6, ns * 1e-6};
  if (link_.candidate())
    if (auto breach = check_call(span, TimingBoundPolicy::cpu())) throw BoundRejected(*breach);
  if (phase == "timing") timed_.add(span);
  return ns;
}

}  // namespace kmcts::worker
