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

// What the build left readable by every uid (the harness may run under one of its own; a
// restrictive umask of kmcts's would otherwise leave the build unreadable to it).
void readable_by_all(const fs::path& folder) {
  std::error_code ec;
  const auto add = fs::perm_options::add;
  for (auto it = fs::recursive_directory_iterator(folder, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_symlink(ec)) continue;
    const bool traverse = it->is_directory(ec) || (it->status(ec).permissions() & fs::perms::owner_exec) != fs::perms::none;
    fs::permissions(it->path(), fs::perms::others_read | fs::perms::group_read |
                                    (traverse ? fs::perms::others_exec | fs::perms::group_exec : fs::perms::none),
                    add, ec);
  }
  fs::permissions(folder, fs::perms::others_read | fs::perms::others_exec, add, ec);
}

}  // namespace

SandboxResult run_prebuild(const PrebuildSpec& spec) {
  const fs::path requests = spec.extensions / "pch-requests";
  const fs::path seen = spec.view_extensions.empty() ? spec.extensions : spec.view_extensions;
  std::vector<std::string> argv = {"env", "CUDA_VISIBLE_DEVICES="};
  for (const auto& [name, value] : spec.env) argv.push_back(name + "=" + value);
  SandboxLimits limits;
  limits.timeout_s = spec.timeout_s;
  limits.max_output_bytes = 4u << 20;
  limits.confine = confinement_enabled();
  limits.build = true;  // ninja runs each compile in a process group of its own
  if (limits.confine) {
    argv.push_back("HOME=/tmp");  // its private /tmp: caches it makes vanish with it
    if (!spec.headers.empty()) argv.push_back("KMCTS_PCH_REQUESTS=" + (seen / "pch-requests").string());
    limits.max_file_bytes = kMaxFileBytes;
    limits.tmpfs_options = "size=4g,mode=1777";  // nvcc's temporary files
    std::error_code ec;
    limits.binds.push_back({spec.extensions.string(), seen.string(), true});
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
  readable_by_all(spec.extensions);
  if (!spec.headers.empty()) readable_by_all(spec.headers);
  return run;
}

}  // namespace kmcts
