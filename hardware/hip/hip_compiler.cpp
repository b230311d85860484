#include "hardware/hip/hip_compiler.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <regex>
#include <sstream>

#include "core/install_paths.hpp"

namespace fs = std::filesystem;

namespace kmcts::hip {

CompilerFlavor hip_compiler_flavor(const std::string& arch) {
  const fs::path hip_abi = data_dir("abi/hip", KMCTS_HIP_ABI_DIR), cpu_abi = data_dir("abi/cpu", KMCTS_CPU_ABI_DIR);
  return {"hip",
          "kernel.hip",
          {"-O3", "-std=c++17", "--offload-arch=" + arch, "-shared", "-fPIC", "-Rpass-analysis=kernel-resource-usage",
           fmt::format("-I{}", hip_abi.string()), fmt::format("-I{}", cpu_abi.string())},
          {hip_abi / "kmcts_hip.h", cpu_abi / "kmcts_cpu.h"},
          [](const std::string& log) { return parse_resource_usage(log); }};
}

nlohmann::json parse_resource_usage(const std::string& log) {
  // FILE:LINE:COL: remark: Function Name: NAME [-Rpass-analysis=kernel-resource-usage]
  // FILE:LINE:COL: remark:     VGPRs: 21 [-Rpass-analysis=kernel-resource-usage]
  static const std::regex name_re(R"(remark: Function Name: (\S+) \[-Rpass-analysis=kernel-resource-usage\])");
  static const std::regex field_re(R"(remark:\s+([A-Za-z ]+?)(?: \[[^\]]*\])?: (\d+) \[-Rpass-analysis=kernel-resource-usage\])");
  static const std::pair<const char*, const char*> fields[] = {
      {"SGPRs", "sgprs"}, {"VGPRs", "vgprs"}, {"AGPRs", "agprs"}, {"ScratchSize", "scratch_bytes"},
      {"Occupancy", "occupancy_waves"}, {"SGPRs Spill", "sgpr_spills"}, {"VGPRs Spill", "vgpr_spills"},
      {"LDS Size", "lds_bytes"}};
  nlohmann::json kernels = nlohmann::json::array();
  std::istringstream in(log);
  std::smatch m;
  for (std::string line; std::getline(in, line);) {
    if (std::regex_search(line, m, name_re)) {
      kernels.push_back({{"name", m[1].str()}});
    } else if (!kernels.empty() && std::regex_search(line, m, field_re)) {
      for (const auto& [label, key] : fields)
        if (m[1].str() == label) kernels.back()[key] = std::stoll(m[2].str());
    }
  }
  long long max_vgprs = 0, spills = 0;
  for (const auto& k : kernels) {
    max_vgprs = std::max(max_vgprs, k.value("vgprs", 0LL));
    spills += k.value("sgpr_spills", 0LL) + k.value("vgpr_spills", 0LL);
  }
  return {{"kernels", kernels}, {"max_vgprs", max_vgprs}, {"spill_count", spills}};
}

}  // namespace kmcts::hip
