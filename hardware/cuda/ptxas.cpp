#include "hardware/cuda/ptxas.hpp"

#include <algorithm>
#include <regex>
#include <sstream>

namespace kmcts::cuda {

namespace {

long long number_before(const std::string& line, const std::regex& pattern) {
  std::smatch m;
  return std::regex_search(line, m, pattern) ? std::stoll(m[1].str()) : 0;
}

}  // namespace

nlohmann::json parse_ptxas_resources(const std::string& log) {
  // ptxas info    : Function properties for _Z6kernelPf
  //     8 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
  // ptxas info    : Used 40 registers, used 1 barriers, 8320 bytes smem, 400 bytes cmem[0]
  static const std::regex kProperties(R"(Function properties for (\S+))");
  static const std::regex kCompiling(R"(Compiling entry function '([^']+)')");
  static const std::regex kStack(R"((\d+) bytes stack frame)"), kSpillStores(R"((\d+) bytes spill stores)"),
      kSpillLoads(R"((\d+) bytes spill loads)"), kRegisters(R"(Used (\d+) registers)"),
      kBarriers(R"(used (\d+) barriers)"), kShared(R"((\d+) bytes smem)"), kConstant(R"((\d+) bytes cmem\[0\])");
  nlohmann::json kernels = nlohmann::json::array();
  nlohmann::json current;
  std::istringstream in(log);
  std::string line;
  std::smatch m;
  auto kernel_named = [&](const std::string& name) -> nlohmann::json& {
    for (auto& k : kernels)
      if (k["name"] == name) return k;
    kernels.push_back({{"name", name}, {"registers", 0}, {"shared_bytes", 0}, {"constant_bytes", 0}, {"stack_bytes", 0},
                       {"spill_store_bytes", 0}, {"spill_load_bytes", 0}, {"barriers", 0}});
    return kernels.back();
  };
  std::string name;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, kCompiling) || std::regex_search(line, m, kProperties)) {
      name = m[1].str();
      kernel_named(name);
      continue;
    }
    if (name.empty()) continue;
    nlohmann::json& k = kernel_named(name);
    if (line.find("stack frame") != std::string::npos) {
      k["stack_bytes"] = number_before(line, kStack);
      k["spill_store_bytes"] = number_before(line, kSpillStores);
      k["spill_load_bytes"] = number_before(line, kSpillLoads);
    } else if (line.find("Used ") != std::string::npos && line.find("registers") != std::string::npos) {
      k["registers"] = number_before(line, kRegisters);
      k["barriers"] = number_before(line, kBarriers);
      k["shared_bytes"] = number_before(line, kShared);
      k["constant_bytes"] = number_before(line, kConstant);
    }
  }
  long long max_registers = 0, spills = 0;
  for (const auto& k : kernels) {
    max_registers = std::max(max_registers, k["registers"].get<long long>());
    spills += k["spill_store_bytes"].get<long long>() + k["spill_load_bytes"].get<long long>();
  }
  return {{"kernels", kernels}, {"max_registers", max_registers}, {"spill_bytes", spills}};
}

}  // namespace kmcts::cuda
