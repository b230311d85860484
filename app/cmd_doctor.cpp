#include <fmt/format.h>

#include "app/commands.hpp"
#include "hardware/doctor.hpp"

namespace kmcts::app {

Command add_doctor(CLI::App& root) {
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = root.add_subcommand("doctor", "Report what this machine can run (compilers, CUDA, CUPTI, ROCm, GPUs, torch)");
  cmd->add_flag("--json", *json, "Machine-readable output");
  return [json] {
    auto caps = probe_machine();
    if (*json) {
      fmt::print("{}\n", to_json(caps).dump(2));
      return 0;
    }
    for (const auto& c : caps) {
      std::string detail = c.detail;
      for (size_t p = 0; (p = detail.find('\n', p)) != std::string::npos; p += 17) detail.replace(p, 1, "\n" + std::string(16, ' '));
      fmt::print("{:<14}  {}  {}\n", c.name, c.available ? "yes" : "no ", detail);
    }
    bool cpu_ready = caps.front().available;
    fmt::print("\ncpu evaluator: {}\n", cpu_ready ? "ready" : "needs a host C++ compiler (c++)");
    // HIP problems (problems/hip) need hipcc to build, rocprofv3 to time and an AMD GPU to run.
    bool hipcc = false, rocprof = false, amd_gpu = false;
    for (const auto& c : caps) {
      if (c.name == "hipcc") hipcc = c.available;
      if (c.name == "rocprofv3") rocprof = c.available;
      if (c.name == "amd gpus") amd_gpu = c.available;
    }
    std::vector<std::string> needed;
    for (const auto& [have, what] : {std::pair{hipcc, "hipcc"}, {rocprof, "rocprofv3"}, {amd_gpu, "an AMD GPU"}})
      if (!have) needed.push_back(what);
    std::string missing;
    for (size_t i = 0; i < needed.size(); ++i)
      missing += (i == 0 ? "" : i + 1 == needed.size() ? " and " : ", ") + needed[i];
    fmt::print("hip evaluator: {} (README, \"AMD GPUs\")\n",
               missing.empty() ? "ready" : (hipcc ? "HIP problems compile; to measure them it needs " : "needs ") + missing);
    return 0;
  };
}

}  // namespace kmcts::app
