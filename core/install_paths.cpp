#include "core/install_paths.hpp"

namespace kmcts {

namespace fs = std::filesystem;

fs::path executable_dir() {
  std::error_code ec;
  return fs::read_symlink("/proc/self/exe", ec).parent_path();
}

fs::path data_dir(const std::string& relative, const fs::path& source_default) {
  std::error_code ec;
  const fs::path installed = executable_dir().parent_path() / "share" / "kmcts" / relative;
  return fs::is_directory(installed, ec) ? installed : source_default;
}

}  // namespace kmcts
