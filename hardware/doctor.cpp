#include "hardware/doctor.hpp"

#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "core/cpus.hpp"
#include "core/text.hpp"
#include "hardware/confine.hpp"
#include "hardware/worker/landlock.hpp"
#include "hardware/cuda/devices.hpp"
#include "hardware/hip/devices.hpp"
#include "hardware/kernelbench/torch_build.hpp"
#include "hardware/sandbox.hpp"

namespace kmcts {
namespace {

namespace fs = std::filesystem;

std::string first_line(const std::string& text) {
  auto start = text.find_first_not_of(" \n");
  if (start == std::string::npos) return "";
  return text.substr(start, text.find('\n', start) - start);
}

enum class Keep { first_line, last_line, all };

Capability probe_tool(const std::string& name, const std::vector<std::string>& argv, Keep keep = Keep::first_line) {
  // 20 s: importing torch cold takes several seconds on a busy machine.
  SandboxLimits limits;
  limits.timeout_s = 20;
  limits.max_output_bytes = 1u << 20;
  SandboxResult r = run_sandboxed(argv, limits);
  Capability c{name, r.exited_cleanly(), ""};
  if (!r.started) c.detail = "not found (" + argv[0] + ")";
  else if (r.timed_out) c.detail = "timed out";
  else if (!c.available) c.detail = "failed: " + last_line(r.err.empty() ? r.out : r.err);  // a traceback ends with the error
  else if (keep == Keep::last_line) c.detail = last_line(r.out);
  else if (keep == Keep::all) c.detail = r.out.substr(0, r.out.find_last_not_of('\n') + 1);
  else c.detail = first_line(r.out.empty() ? r.err : r.out);
  return c;
}

// " (driver 13.0, runtime 13.0, CUPTI API 130001)"
std::string fmt_versions(const nlohmann::json& j) {
  auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
  return "\n(driver " + version(j.value("driver_version", 0)) + ", runtime " + version(j.value("runtime_version", 0)) +
         ", CUPTI API " + std::to_string(j.value("cupti_api_version", -1)) + ")";
}

std::string cuda_root() {
  if (const char* env = std::getenv("CUDA_HOME")) return env;
  return "/usr/local/cuda";
}

Capability probe_cupti() {
  Capability c{"cupti", false, ""};
  const fs::path root = cuda_root();
  for (const fs::path& dir : {root / "extras/CUPTI/lib64", root / "lib64", root / "targets/x86_64-linux/lib"}) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      std::string file = entry.path().filename().string();
      if (file.rfind("libcupti.so", 0) == 0) {
        c.available = true;
        c.detail = entry.path().string();
        return c;
      }
    }
  }
  c.detail = "libcupti.so not found under " + root.string();
  return c;
}

// GPUs as the CUDA runtime sees them, through kmcts-cuda-probe (built where CUDA was found).
Capability probe_cuda_devices() {
  Capability c{"cuda devices", false, ""};
  nlohmann::json j = cuda::probe_devices(30);
  if (j.contains("error")) {
    c.detail = j["error"].get<std::string>();
    return c;
  }
  c.available = !j["devices"].empty();
  c.detail = c.available ? "" : "no CUDA device";
  for (const auto& d : j["devices"]) {
    if (!c.detail.empty()) c.detail += "\n";
    c.detail += d.contains("error") ? d["error"].get<std::string>()
                                    : d["name"].get<std::string>() + ", " + d["arch"].get<std::string>() + ", " +
                                          std::to_string(d["sms"].get<int>()) + " SMs, " +
                                          std::to_string(d["memory_bytes"].get<int64_t>() >> 20) + " MiB, L2 " +
                                          std::to_string(d["l2_bytes"].get<int64_t>() >> 20) + " MiB";
  }
  c.detail += fmt_versions(j);
  return c;
}

// AMD GPUs as rocminfo lists them (it needs the amdgpu driver's /dev/kfd).
Capability probe_amd_gpus() {
  Capability c{"amd gpus", false, ""};
  if (!fs::exists("/dev/kfd")) {
    c.detail = "none (no /dev/kfd: no amdgpu driver)";
    return c;
  }
  SandboxLimits limits;
  limits.timeout_s = 20;
  limits.max_output_bytes = 4u << 20;
  const std::string rocminfo = hip::find_hip_tool("", "rocminfo");
  SandboxResult r = run_sandboxed({rocminfo}, limits);
  if (!r.exited_cleanly()) {
    c.detail = !r.started ? "rocminfo not found (" + rocminfo + ")" : "rocminfo failed: " + last_line(r.err.empty() ? r.out : r.err);
    return c;
  }
  for (const hip::HipGpu& g : hip::parse_rocminfo(r.out)) {
    if (!c.detail.empty()) c.detail += "\n";
    c.detail += g.arch + (g.name.empty() ? "" : ", " + g.name) +
                (g.compute_units > 0 ? fmt::format(", {} CUs", g.compute_units) : std::string());
  }
  c.available = !c.detail.empty();
  if (!c.available) c.detail = "rocminfo lists no GPU agent";
  return c;
}

}  // namespace

std::vector<Capability> probe_machine() {
  std::vector<Capability> caps;
  // Pools, compile slots and ablation jobs are sized by this, not by the host's online CPUs.
  caps.push_back({"cpus", true, cpu_budget().describe()});
  caps.push_back(probe_tool("host compiler", {"c++", "--version"}));
  caps.push_back(probe_tool("nvcc", {cuda::find_cuda_tool("", "nvcc"), "--version"}, Keep::last_line));
  caps.push_back(probe_cupti());
  caps.push_back(probe_tool("gpus", {"nvidia-smi", "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader"},
                            Keep::all));
  caps.push_back(probe_cuda_devices());
  caps.push_back(probe_tool("hipcc", {hip::find_hip_tool("", "hipcc"), "--version"}));
  caps.push_back(probe_tool("rocprofv3", {hip::find_hip_tool("", "rocprofv3"), "--version"}));
  caps.push_back(probe_amd_gpus());
  caps.push_back(probe_tool("python3", {"python3", "--version"}));
  // torch.cuda is HIP's on a ROCm build: the build named says which (KernelBench's hip backend needs ROCm's).
  const TorchBuild torch = probe_torch_build("python3");
  caps.push_back({"torch", torch.imported,
                  torch.imported ? fmt::format("{}, {} device(s)", torch.describe(), torch.devices)
                                 : "failed: " + torch.error});
  const ConfinementSupport& confined = confinement_support();
  caps.push_back({"confinement", confined.refused.empty(),
                  "candidate processes: " + confined.summary() +
                      (confined.refused.empty() ? std::string() : "; refused here: " + confined.refused)});
  // The KernelBench candidate's guard (kernelbench/guard/kb_guard.h) needs Landlock: writes from
  // ABI 1, signals scoped from ABI 6 (below it, a seccomp rule stands in).
  const int abi = landlock_abi();
  caps.push_back({"landlock", abi > 0,
                  abi == 0 ? "none: a KernelBench candidate's process may write wherever the harness may"
                           : fmt::format("ABI {}: KernelBench candidates write only in their folders{}", abi,
                                         abi >= 6 ? ", signal only their own processes" : "")});
  return caps;
}

nlohmann::json to_json(const std::vector<Capability>& caps) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& c : caps) j[c.name] = {{"available", c.available}, {"detail", c.detail}};
  return j;
}

}  // namespace kmcts
