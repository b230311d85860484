#include "hardware/companion.hpp"

namespace kmcts {

namespace fs = std::filesystem;

std::optional<fs::path> find_companion(const std::string& name) {
  std::error_code ec;
  fs::path dir = executable_dir();
  for (const fs::path& candidate : {dir / name, dir.parent_path() / name})
    if (fs::exists(candidate, ec)) return candidate;
  return std::nullopt;
}

}  // namespace kmcts
