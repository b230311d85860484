#include "hardware/kernelbench/kb_prebuild.hpp"

#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <sstream>
#include <vector>

#include "core/text.hpp"

namespace kmcts {
namespace fs = std::filesystem;
namespace {

constexpr uint64_t kMaxFileBytes = 4ull << 30;  // a precompiled header is ~650 MB

}  // namespace

std::vector<std::string> python_folders(const std::string& python) {
  static std::mutex mutex;
  static std::map<std::string, std::vector<std::string>> known;
  std::lock_guard lock(mutex);
  if (auto it = known.find(python); it != known.end()) return it->second;
  SandboxLimits limits;
  limits.timeout_s = 30;
  const SandboxResult run = run_sandboxed(
      {python, "-c", "import site, sys; print(sys.prefix); print(sys.base_prefix); print(site.getusersitepackages())"},
      limits);
  std::vector<std::string> folders;
  std::istringstream lines(run.out);
  for (std::string line; std::getline(lines, line);) {
    std::error_code ec;
    if (!line.empty() && fs::is_directory(line, ec)) folders.push_back(fs::canonical(line, ec).string());
  }
  // An interpreter named by its path (a virtual environment's, a stand-in) may sit elsewhere.
  if (python.find('/') != std::string::npos) folders.push_back(fs::absolute(python).parent_path().string());
  return known[python] = folders;
}

namespace {

// The headers the build asked for, made by kb_cxx.py --make-pch (it checks the flags); one at a
// time in this process, each request removed once tried.
void make_requested_headers(const PrebuildSpec& spec, const fs::path& requests) {
  static std::mutex one_at_a_time;
  std::error_code ec;
  if (!fs::is_directory(requests, ec)) return;
  std::lock_guard lock(one_at_a_time);
  for (const auto& entry : fs::directory_iterator(requests, ec)) {
    std::vector<std::string> argv = {"env"};
    for (const auto& [name, value] : spec.env) argv.push_back(name + "=" + value);
    argv.insert(argv.end(), {spec.python, (spec.harness_dir / "kb_cxx.py").string(), "--make-pch", entry.path().string()});
    SandboxLimits limits;
    limits.timeout_s = spec.timeout_s;
    run_sandboxed(argv, limits, spec.harness_dir);
    fs::remove(entry.path(), ec);
  }
  fs::remove_all(requests, ec);
}

}  // namespace

SandboxResult run_prebuild(const PrebuildSpec& spec) {
  const fs::path requests = spec.extensions / "pch-requests";
  std::vector<std::string> argv = {"env", "CUDA_VISIBLE_DEVICES="};
  for (const auto& [name, value] : spec.env) argv.push_back(name + "=" + value);
  SandboxLimits limits;
  limits.timeout_s = spec.timeout_s;
  limits.max_output_bytes = 4u << 20;
  limits.confine = confinement_enabled();
  limits.build = true;  // ninja runs each compile in a process group of its own
  if (limits.confine) {
    argv.push_back("HOME=/tmp");  // its private /tmp: caches it makes vanish with it
    if (!spec.headers.empty()) argv.push_back("KMCTS_PCH_REQUESTS=" + requests.string());
    limits.max_file_bytes = kMaxFileBytes;
    limits.tmpfs_options = "size=4g,mode=1777";  // nvcc's temporary files
    std::error_code ec;
    limits.binds.push_back({spec.extensions.string(), spec.extensions.string(), true});
    if (!spec.headers.empty()) {
      fs::create_directories(spec.headers, ec);
      limits.binds.push_back({spec.headers.string(), spec.headers.string(), false});
    }
    limits.binds.push_back({spec.harness_dir.string(), spec.harness_dir.string(), false});
    limits.binds.push_back({spec.candidate.string(), spec.candidate.string(), false});
    const std::vector<std::string> python = python_folders(spec.python);
    hide_home(limits, std::vector<fs::path>(python.begin(), python.end()));
  }
  argv.insert(argv.end(), {spec.python, (spec.harness_dir / "prebuild.py").string(), spec.candidate.string()});
  SandboxResult run = run_sandboxed(argv, limits, spec.harness_dir);
  if (limits.confine) hand_over(spec.extensions.string(), geteuid());  // back from its uid
  make_requested_headers(spec, requests);
  return run;
}

}  // namespace kmcts
