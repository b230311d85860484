#include "hardware/companion.hpp"

#include <fmt/format.h>

#include <cstdlib>

#include "core/error.hpp"

namespace kmcts {

namespace fs = std::filesystem;

std::optional<fs::path> find_companion(const std::string& name) {
  std::error_code ec;
  fs::path dir = executable_dir();
  for (const fs::path& candidate : {dir / name, dir.parent_path() / name})
    if (fs::exists(candidate, ec)) return candidate;
  return std::nullopt;
}

fs::path find_worker_executable(const std::string& configured, const std::string& name, const std::string& option,
                                const std::string& missing_hint) {
  if (!configured.empty()) {
    if (!fs::exists(configured)) throw InputError(fmt::format("{}: '{}' does not exist", option, configured));
    return fs::absolute(configured);
  }
  if (auto found = find_companion(name)) return *found;
  throw InputError(fmt::format("the worker '{}' does not exist: {} (or set {})", (executable_dir() / name).string(),
                               missing_hint, option));
}

std::string find_toolkit_program(const std::string& configured, const std::string& name, const char* env_var,
                                 const std::filesystem::path& default_root) {
  if (!configured.empty()) return configured;
  if (const char* home = std::getenv(env_var); home && *home && fs::exists(fs::path(home) / "bin" / name))
    return (fs::path(home) / "bin" / name).string();
  if (fs::exists(default_root / "bin" / name)) return (default_root / "bin" / name).string();
  return name;
}

}  // namespace kmcts
