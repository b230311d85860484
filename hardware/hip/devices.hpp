#pragma once
// What a machine offers for HIP: the ROCm tools and the AMD GPUs with their architectures, as
// rocminfo lists them (the arch a kernel is built for when evaluator.hip.arch is not set).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kmcts::hip {

/// `configured` when set, else $ROCM_PATH/bin/NAME, /opt/rocm/bin/NAME, else NAME (on PATH).
std::string find_hip_tool(const std::string& configured, const std::string& name);

struct HipGpu {
  std::string arch;  // "gfx942" (the Name of a GPU agent)
  std::string name;  // "AMD Instinct MI300X" (its Marketing Name), or "" when not given
  int compute_units = 0;
};

/// The GPU agents of `rocminfo`'s output, in its order (CPU agents are left out).
std::vector<HipGpu> parse_rocminfo(const std::string& text);

}  // namespace kmcts::hip
