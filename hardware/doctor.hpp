#pragma once
// What this machine can run: host compiler, CUDA toolkit and CUPTI, NVIDIA GPUs, hipcc,
// rocprofv3 and AMD GPUs, python3+torch.
// Each probe runs the tool in a sandboxed child with a short timeout, so a hung driver
// or a slow python import cannot hang `kmcts doctor`.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kmcts {

struct Capability {
  std::string name;     // "host compiler", "nvcc", "cupti", "gpus", "hipcc", "amd gpus", "python3", "torch", ...
  bool available = false;
  std::string detail;   // version line, device list, or why it is missing
};

std::vector<Capability> probe_machine();
nlohmann::json to_json(const std::vector<Capability>& caps);

}  // namespace kmcts
