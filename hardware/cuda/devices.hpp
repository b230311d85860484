#pragma once
// What the machine offers for CUDA, as `kmcts doctor` and the cuda evaluator both ask it:
// the CUDA tools (nvcc, ncu) and the GPUs that kmcts-cuda-probe sees. CUDA-free itself.
#include <string>

#include <nlohmann/json.hpp>

namespace kmcts::cuda {

/// A CUDA tool: `configured` when set, else $CUDA_HOME/bin/NAME, /usr/local/cuda/bin/NAME,
/// else NAME (searched in PATH when run).
std::string find_cuda_tool(const std::string& configured, const std::string& name);

/// kmcts-cuda-probe's answer: {"devices": [{"index", "name", "arch", "sms", ...}],
/// "driver_version", "runtime_version", "cupti_api_version"}, with "error" when CUDA could
/// not start or the probe is missing or failed.
nlohmann::json probe_devices(double timeout_s = 60);

}  // namespace kmcts::cuda
