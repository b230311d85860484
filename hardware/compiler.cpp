#include "hardware/compiler.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <system_error>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/hash.hpp"
#include "core/text.hpp"
#include "hardware/sandbox.hpp"

namespace kmcts {
namespace {

namespace fs = std::filesystem;

// `--version` answers instantly; a compiler that takes longer is broken or a wrapper
// waiting for a network licence server, and we would rather fail early.
constexpr double kVersionTimeoutS = 30;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  return static_cast<bool>(out);
}

/// Writes `text` to `path` so readers see the old file or the whole new one.
bool write_atomically(const fs::path& path, const std::string& text, const std::string& unique) {
  fs::path temp = path;
  temp += ".tmp-" + unique;
  if (!write_file(temp, text)) return false;
  std::error_code ec;
  fs::rename(temp, path, ec);
  if (ec) fs::remove(temp, ec);
  return !ec;
}

/// A name no other thread or process uses at the same time.
std::string unique_suffix() {
  static std::atomic<uint64_t> counter{0};
  return fmt::format("{}-{}", getpid(), counter.fetch_add(1));
}


// A compile of candidate source is confined like a worker (hardware/confine.hpp), as a build: the
// user's home is hidden (an `#include "~/.aws/credentials"` would put the file into the log an
// agent reads), its own folder is the one writable place, and the include folders of its
// command and the compiler's own prefix are bound in read-only where they lie in the home.
void confine_compile(SandboxLimits& limits, const std::vector<std::string>& cmd, const fs::path& work) {
  limits.confine = true;
  limits.build = true;
  limits.max_file_bytes = 1ull << 30;
  limits.tmpfs_options = "size=1g,mode=1777";  // nvcc's temporary files
  limits.binds.push_back({work.string(), work.string(), true});
  std::vector<fs::path> needed;
  for (size_t i = 0; i < cmd.size(); ++i) {
    if ((cmd[i] == "-I" || cmd[i] == "-isystem") && i + 1 < cmd.size()) needed.emplace_back(cmd[i + 1]);
    else if (cmd[i].rfind("-I", 0) == 0 && cmd[i].size() > 2) needed.emplace_back(cmd[i].substr(2));
  }
  std::error_code ec;
  if (const std::string program = find_program(cmd.front()); !program.empty())
    needed.push_back(fs::canonical(program, ec).parent_path().parent_path());
  hide_home(limits, needed);
}

}  // namespace

nlohmann::json KernelCompiler::resources(const std::string& log, uintmax_t so_bytes) const {
  nlohmann::json r = flavor_.resources ? flavor_.resources(log) : nlohmann::json::object();
  r["so_bytes"] = so_bytes;
  return r;
}

fs::path default_cache_dir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return fs::path(xdg) / "kmcts";
  if (const char* home = std::getenv("HOME"); home && *home) return fs::path(home) / ".cache" / "kmcts";
  return fs::temp_directory_path() / "kmcts-cache";
}

KernelCompiler::KernelCompiler(CompilerSettings settings, CompilerFlavor flavor, std::string option)
    : settings_(std::move(settings)), flavor_(std::move(flavor)) {
  if (settings_.cache_dir.empty()) settings_.cache_dir = default_cache_dir();
  object_dir_ = settings_.cache_dir / flavor_.name;
  std::error_code ec;
  fs::create_directories(object_dir_ / "tmp", ec);
  if (ec)
    throw InputError(fmt::format("evaluator.cache_dir: cannot create '{}': {}", object_dir_.string(), ec.message()));

  SandboxLimits limits;
  limits.timeout_s = kVersionTimeoutS;
  SandboxResult probe = run_sandboxed({settings_.compiler, "--version"}, limits);
  if (!probe.exited_cleanly())
    throw InputError(fmt::format("{} '{}' cannot be run: {}", option, settings_.compiler,
                                 probe.started ? first_line(probe.err + probe.out) : probe.error));
  // nvcc prints its banner first; the release line is the last one.
  version_ = flavor_.name == "cpu" ? first_line(probe.out) : last_line(probe.out);
  identity_ = probe.out;
  for (const auto& header : flavor_.abi_headers) {
    identity_ += '\n';
    identity_ += read_file(header);
  }
}

std::vector<std::string> KernelCompiler::command(const std::string& src, const std::string& out,
                                                 const std::vector<std::string>& more_flags) const {
  std::vector<std::string> cmd = {settings_.compiler};
  cmd.insert(cmd.end(), flavor_.base_flags.begin(), flavor_.base_flags.end());
  cmd.insert(cmd.end(), settings_.extra_flags.begin(), settings_.extra_flags.end());
  // Sources before libraries: the linker resolves -l flags against what precedes them.
  cmd.insert(cmd.end(), {src, "-o", out});
  cmd.insert(cmd.end(), more_flags.begin(), more_flags.end());
  return cmd;
}

BuildResult KernelCompiler::compile(const std::string& source, const std::vector<std::string>& more_flags) const {
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  BuildResult result;
  result.source_hash = sha256_hex(source);
  std::string flags;
  const std::vector<std::string> cmd = command(flavor_.source_name, "kernel.so", more_flags);
  for (const auto& part : cmd) flags += part + '\0';
  const std::string key = sha256_hex(source + '\0' + flags + '\0' + identity_);
  const fs::path object = object_dir_ / (key + ".so");
  const fs::path log_path = object_dir_ / (key + ".log");

  std::error_code ec;
  if (fs::exists(object, ec)) {
    result.ok = true;
    result.cached = true;
    result.artifact = object.string();
    result.log = read_file(log_path);
    result.resources = resources(result.log, fs::file_size(object, ec));
    result.seconds = elapsed();
    return result;
  }

  // A private folder per compile, with fixed file names, so messages read "kernel.cpp:3:5:"
  // (what an agent can act on) and parallel compiles of one source never share a file.
  const std::string unique = unique_suffix();
  const fs::path work = object_dir_ / "tmp" / (key.substr(0, 16) + "-" + unique);
  fs::create_directories(work, ec);
  if (ec || !write_file(work / flavor_.source_name, source)) {
    result.log = fmt::format("cannot write the source into '{}': {}", work.string(), ec.message());
    result.seconds = elapsed();
    fs::remove_all(work, ec);
    return result;
  }
  SandboxLimits limits;
  limits.timeout_s = settings_.timeout_s;
  limits.memory_mb = settings_.memory_mb;
  if (confinement_enabled()) confine_compile(limits, cmd, work);
  SandboxResult run = run_sandboxed(cmd, limits, work);
  if (limits.confine) hand_over(work.string(), geteuid());  // back from the compile's uid
  result.log = run.err + run.out;
  if (!run.started) {
    result.log = "cannot run the compiler: " + run.error;
  } else if (run.timed_out) {
    result.log = fmt::format("compiler timed out after {:.0f} s\n{}", settings_.timeout_s, result.log);
  } else if (run.signal != 0) {
    result.log = fmt::format("compiler killed by {} (memory limit {} MiB?)\n{}", signal_name(run.signal),
                             settings_.memory_mb, result.log);
  } else if (run.exit_code == 0) {
    // Log first, then the object: whoever sees the object also finds its log.
    write_atomically(log_path, result.log, unique);
    fs::rename(work / "kernel.so", object, ec);
    if (ec) {
      result.log = fmt::format("cannot store the shared object in '{}': {}", object.string(), ec.message());
    } else {
      result.ok = true;
      result.artifact = object.string();
      result.resources = resources(result.log, fs::file_size(object, ec));
    }
  } else if (result.log.empty()) {
    result.log = fmt::format("compiler exited with code {} and no message", run.exit_code);
  }
  fs::remove_all(work, ec);
  result.seconds = elapsed();
  return result;
}

}  // namespace kmcts
