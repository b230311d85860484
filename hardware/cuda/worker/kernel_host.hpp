#pragma once
// The CUDA worker's handle on one kmcts-cuda-host (hardware/cuda/host/main.cpp), over a
// HostLink (hardware/worker/host_link.hpp): the host maps the arenas of the tensors it is handed
// by CUDA IPC, bound once under a key per pair of tensor sets.
#include <map>
#include <memory>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "hardware/cuda/worker/device.hpp"
#include "hardware/worker/host_link.hpp"

namespace kmcts::worker {

class KernelHost {
 public:
  /// Starts the host for `kernel` on `device`. Throws HostFailure when it cannot start.
  KernelHost(bool candidate, const std::string& kernel, int device, bool tracing);
  /// Waits for the host to load the kernel (hosts start side by side, then both are waited
  /// for). A kernel that does not load is `load_error` (set, the host ended) rather than an
  /// exception, so the caller can name it; anything else throws HostFailure.
  void wait_ready();

  const std::string& load_error() const { return link_.load_error(); }
  uint32_t launch_stream() const { return launch_stream_; }
  pid_t pid() const { return link_.pid(); }
  /// Ends the host in order (HostLink::finish): a HIP host's trace is written as it exits.
  std::string finish(double timeout_s) { return link_.finish(timeout_s); }
  /// The key these tensors are bound under in the host, binding them (and mapping their
  /// arenas) at first use.
  int bind(const DeviceTensors& inputs, const DeviceTensors& outputs);
  nlohmann::json request(const nlohmann::json& r, const std::string& phase) { return link_.request(r, phase); }

 private:
  HostLink link_;
  uint32_t launch_stream_ = 0;
  std::map<std::pair<const void*, const void*>, int> keys_;
  std::map<int, bool> arenas_sent_;
};

}  // namespace kmcts::worker
