#include "hardware/hip/devices.hpp"

#include <cstdlib>
#include <sstream>

#include "core/text.hpp"
#include "hardware/companion.hpp"

namespace kmcts::hip {

std::string find_hip_tool(const std::string& configured, const std::string& name) {
  return find_toolkit_program(configured, name, "ROCM_PATH", "/opt/rocm");
}

std::vector<HipGpu> parse_rocminfo(const std::string& text) {
  // Agents are blocks that start with "Agent N" after a row of asterisks; inside, "Key: value"
  // lines, the agent's own ones indented by two spaces (its pools and ISAs deeper).
  std::vector<HipGpu> gpus;
  HipGpu current;
  bool in_agent = false, is_gpu = false;
  auto flush = [&] {
    if (in_agent && is_gpu && !current.arch.empty()) gpus.push_back(current);
    current = {}, is_gpu = false;
  };
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const std::string t = trim(line);
    if (t.rfind("Agent ", 0) == 0 && t.find(':') == std::string::npos) {
      flush();
      in_agent = true;
      continue;
    }
    if (!in_agent || line.rfind("  ", 0) != 0 || line.rfind("    ", 0) == 0) continue;  // the agent's own keys only
    const size_t colon = t.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trim(t.substr(0, colon)), value = trim(t.substr(colon + 1));
    if (key == "Name" && current.arch.empty()) current.arch = value;
    else if (key == "Marketing Name") current.name = value;
    else if (key == "Device Type") is_gpu = value == "GPU";
    else if (key == "Compute Unit") current.compute_units = std::atoi(value.c_str());
  }
  flush();
  return gpus;
}

}  // namespace kmcts::hip
