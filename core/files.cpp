#include "core/files.hpp"

#include <unistd.h>

#include <atomic>
#include <fstream>
#include <sstream>

#include "core/error.hpp"

namespace kmcts {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw RunError("cannot read " + path.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file_atomic(const fs::path& path, const std::string& content) {
  static std::atomic<int> counter{0};  // distinct temp names when threads write at once
  const fs::path tmp = path.string() + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(++counter);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.close();
    if (!out) {
      std::error_code ignored;
      fs::remove(tmp, ignored);
      throw RunError("cannot write " + tmp.string());
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw RunError("cannot write " + path.string() + ": " + ec.message());
  }
}

}  // namespace kmcts
