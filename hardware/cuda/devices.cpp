#include "hardware/cuda/devices.hpp"

#include <cstdlib>
#include <filesystem>

#include "core/text.hpp"
#include "hardware/companion.hpp"
#include "hardware/sandbox.hpp"

namespace kmcts::cuda {

namespace fs = std::filesystem;

std::string find_cuda_tool(const std::string& configured, const std::string& name) {
  return find_toolkit_program(configured, name, "CUDA_HOME", "/usr/local/cuda");
}

nlohmann::json probe_devices(double timeout_s) {
  auto probe = find_companion("kmcts-cuda-probe");
  if (!probe) return {{"error", "kmcts-cuda-probe not built (no CUDA toolkit with CUPTI at build time)"}};
  SandboxLimits limits;
  limits.timeout_s = timeout_s;
  limits.max_output_bytes = 1u << 20;
  SandboxResult run = run_sandboxed({probe->string()}, limits);
  if (run.timed_out) return {{"error", "the CUDA probe timed out"}};
  nlohmann::json answer = nlohmann::json::parse(last_line(run.out), nullptr, false);
  if (answer.is_discarded() || !answer.is_object())
    return {{"error", "the CUDA probe failed: " + first_line(run.err + run.out + run.error)}};
  return answer;
}

}  // namespace kmcts::cuda
