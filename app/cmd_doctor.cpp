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
    // HIP problems (problems/hip) compile with hipcc; nothing in this build runs them yet.
    for (const auto& c : caps)
      if (c.name == "hipcc")
        fmt::print("hip problems:  {}; no hip evaluator in this build (README, \"AMD GPUs\")\n",
                   c.available ? "compile with this hipcc" : "need hipcc to compile");
    return 0;
  };
}

}  // namespace kmcts::app
