#include "hardware/kernelbench/torch_build.hpp"

#include <map>
#include <mutex>

#include <nlohmann/json.hpp>

#include "core/text.hpp"
#include "hardware/sandbox.hpp"

namespace kmcts {

std::string TorchBuild::describe() const {
  if (!imported) return "no torch (" + error + ")";
  const std::string platform = !hip.empty() ? "ROCm/HIP " + hip : !cuda.empty() ? "CUDA " + cuda : "CPU only";
  return "torch " + version + " (" + platform + ")";
}

TorchBuild parse_torch_build(const std::string& line) {
  TorchBuild b;
  try {
    const nlohmann::json j = nlohmann::json::parse(line);
    auto text = [&](const char* key) {
      return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
    };
    b.version = text("version");
    b.cuda = text("cuda");
    b.hip = text("hip");
    b.devices = j.contains("devices") && j["devices"].is_number_integer() ? j["devices"].get<int>() : 0;
    b.imported = !b.version.empty();
    if (!b.imported) b.error = "no torch version in its answer";
  } catch (const nlohmann::json::exception&) {
    b.error = "unexpected answer: " + line.substr(0, 200);
  }
  return b;
}

TorchBuild probe_torch_build(const std::string& python) {
  static std::mutex mutex;
  static std::map<std::string, TorchBuild> known;
  std::lock_guard lock(mutex);
  if (auto it = known.find(python); it != known.end()) return it->second;
  SandboxLimits limits;
  limits.timeout_s = 60;  // a cold import of a ROCm torch from a slow file system takes a while
  limits.max_output_bytes = 1u << 20;
  const SandboxResult r = run_sandboxed(
      {python, "-c",
       "import json, torch; v = torch.version; print(json.dumps({'version': torch.__version__, "
       "'cuda': getattr(v, 'cuda', None), 'hip': getattr(v, 'hip', None), 'devices': torch.cuda.device_count()}))"},
      limits);
  TorchBuild b;
  if (!r.started) b.error = "cannot run " + python;
  else if (r.timed_out) b.timed_out = true, b.error = python + " took over 60 s to import torch";
  else if (!r.exited_cleanly()) b.error = last_line(r.err.empty() ? r.out : r.err);  // a traceback ends with the error
  else b = parse_torch_build(last_line(r.out));
  if (b.imported) known[python] = b;  // a failure is asked again: it may have been the load of the moment
  return b;
}

}  // namespace kmcts
