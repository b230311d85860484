#pragma once
// A fresh, empty path under the system's temporary folder for one test: the test's name and
// the process id keep parallel test processes apart. Nothing is created; tests remove it.
#include <unistd.h>

#include <filesystem>
#include <string>

namespace kmcts::test {

inline std::filesystem::path fresh_dir(const std::string& name) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("kmcts-test-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir;
}

}  // namespace kmcts::test
