#pragma once
// The trusted worker's handle on one kmcts-cuda-host process (hardware/cuda/host/main.cpp):
// the process that loads and calls one kernel, so that this one never runs either kernel's
// code. Started with posix_spawn beside the worker's binary, its requests and replies one
// JSON line each over two pipes, nothing else of the worker's inherited (fds 0-3 only). The
// worker is not dumpable, so a host under the same uid cannot read its memory or environment.
#include <sys/types.h>

#include <map>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "hardware/cuda/worker/device.hpp"

namespace kmcts::worker {

/// The host is gone or broke the protocol: what it was doing and why (its exit, its signal,
/// a malformed reply). `candidate` says whose host it was.
struct HostFailure : std::runtime_error {
  HostFailure(bool candidate, const std::string& what) : std::runtime_error(what), candidate(candidate) {}
  bool candidate;
};

class KernelHost {
 public:
  /// Starts the host for `kernel` on `device`. Throws HostFailure when it cannot start.
  KernelHost(bool candidate, const std::string& kernel, int device, bool tracing);
  /// Waits for the host to load the kernel (hosts start side by side, then both are waited
  /// for). A kernel that does not load is `load_error` (set, the host ended) rather than an
  /// exception, so the caller can name it; anything else throws HostFailure.
  void wait_ready();
  ~KernelHost();
  KernelHost(const KernelHost&) = delete;
  KernelHost& operator=(const KernelHost&) = delete;

  const std::string& load_error() const { return load_error_; }
  uint32_t launch_stream() const { return launch_stream_; }
  /// The key these tensors are bound under in the host, binding them (and mapping their
  /// arenas) at first use.
  int bind(const DeviceTensors& inputs, const DeviceTensors& outputs);
  /// One request, its reply. A reply {"fault": ...} is returned as is; a host that ended or
  /// sent something that is not one JSON object under the size limit throws HostFailure.
  nlohmann::json request(const nlohmann::json& r, const std::string& phase);

 private:
  std::string read_line(const std::string& phase);
  [[noreturn]] void gone(const std::string& phase, const std::string& why);

  bool candidate_;
  pid_t pid_ = -1;
  int to_host_ = -1, from_host_ = -1;
  std::string buffer_;
  std::string load_error_;
  uint32_t launch_stream_ = 0;
  std::map<std::pair<const void*, const void*>, int> keys_;
  std::map<int, bool> arenas_sent_;
};

}  // namespace kmcts::worker
