#include "reports/unified_diff.hpp"

#include <unistd.h>

#include <filesystem>
#include <random>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/files.hpp"
#include "hardware/sandbox.hpp"

namespace kmcts {
namespace fs = std::filesystem;

std::string unified_diff(const std::string& before, const std::string& after, const std::string& before_label,
                         const std::string& after_label, const std::string& program) {
  // Files, not pipes: the sandbox gives the child /dev/null as its stdin.
  const fs::path dir = fs::temp_directory_path() /
                       fmt::format("kmcts-diff-{}-{:x}", ::getpid(), std::random_device{}());
  fs::create_directories(dir);
  struct Cleanup {
    fs::path dir;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } cleanup{dir};
  write_file_atomic(dir / "before", before);
  write_file_atomic(dir / "after", after);
  SandboxLimits limits;
  limits.timeout_s = 30;
  limits.max_output_bytes = 64u << 20;
  const SandboxResult r = run_sandboxed({program, "-u", "--label", before_label, "--label", after_label,
                                         (dir / "before").string(), (dir / "after").string()},
                                        limits);
  if (!r.started) throw RunError(fmt::format("cannot run {}: {}", program, r.error));
  // diff exits 0 for equal texts, 1 for different ones, 2 for trouble.
  if (r.timed_out || r.signal != 0 || r.exit_code > 1)
    throw RunError(fmt::format("{} -u failed: {}", program, r.err.substr(0, r.err.find('\n'))));
  return r.out;
}

}  // namespace kmcts
