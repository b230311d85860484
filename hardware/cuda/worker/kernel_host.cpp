#include "hardware/cuda/worker/kernel_host.hpp"

#include <vector>

namespace kmcts::worker {
namespace {

using nlohmann::json;

std::vector<std::string> host_args(int device, const std::string& kernel, bool tracing) {
  std::vector<std::string> args = {"--device", std::to_string(device), "--kernel", kernel};
  if (!tracing) args.push_back("--no-tracing");
  return args;
}

json tensors_json(const DeviceTensors& t) {
  json list = json::array();
  for (int32_t i = 0; i < t.count(); ++i) {
    const kmcts_tensor& v = t.view(static_cast<size_t>(i));
    list.push_back({{"arena", t.arena()->id()},
                    {"offset", t.offset(static_cast<size_t>(i))},
                    {"dtype", v.dtype},
                    {"shape", std::vector<int64_t>(v.shape, v.shape + v.ndim)}});
  }
  return list;
}

}  // namespace

KernelHost::KernelHost(bool candidate, const std::string& kernel, int device, bool tracing)
    : link_(candidate, beside_self(kHostBinary), host_args(device, kernel, tracing), {},
            // HIP: rocprofv3 writes each host's trace in a folder of its own (rocprof_timing.hpp).
            {std::string("KMCTS_TRACE_ROLE=") + (candidate ? "candidate" : "reference")}) {}

void KernelHost::wait_ready() {
  const json ready = link_.wait_ready();
  if (load_error().empty()) launch_stream_ = ready.value("launch_stream", 0u);
}

int KernelHost::bind(const DeviceTensors& inputs, const DeviceTensors& outputs) {
  const auto id = std::make_pair(static_cast<const void*>(&inputs), static_cast<const void*>(&outputs));
  if (auto known = keys_.find(id); known != keys_.end()) return known->second;
  const int key = static_cast<int>(keys_.size());
  json arenas = json::array();
  for (const DeviceArena* a : {inputs.arena(), outputs.arena()})
    if (!arenas_sent_[a->id()]) arenas.push_back({{"id", a->id()}, {"handle", a->ipc_handle()}}), arenas_sent_[a->id()] = true;
  const json reply = link_.request(
      {{"op", "bind"}, {"key", key}, {"arenas", arenas}, {"inputs", tensors_json(inputs)}, {"outputs", tensors_json(outputs)}},
      "binding buffers");
  if (!reply.value("ok", false)) link_.gone("binding buffers", "refused: " + reply.dump().substr(0, 200));
  keys_[id] = key;
  return key;
}

}  // namespace kmcts::worker
