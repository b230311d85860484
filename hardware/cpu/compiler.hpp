#pragma once
// Compiles a kernel source into a shared object with the host C++ compiler, cached by
// content: sha256(source, flags, compiler --version, ABI header). Many compiles may run at
// once, also of the same source: each works in its own temporary folder and publishes the
// result with an atomic rename, so a reader never sees half a file.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "hardware/evaluator.hpp"

namespace kmcts {

struct CpuCompilerSettings {
  std::string compiler = "c++";
  std::filesystem::path cache_dir;  // the compiler keeps its files under cache_dir/cpu
  double timeout_s = 120;
  int64_t memory_mb = 4096;         // a compiler on a huge unrolled source can eat a machine
  std::vector<std::string> extra_flags;  // the problem's compile_flags
};

class CpuCompiler {
 public:
  /// Runs `compiler --version` once; a compiler that cannot run is an InputError naming it.
  explicit CpuCompiler(CpuCompilerSettings settings);

  /// Never throws for a bad source: ok=false with the compiler's message in `log`.
  BuildResult compile(const std::string& source) const;

  /// The whole command line for a source file `src` and output `out`.
  std::vector<std::string> command(const std::string& src, const std::string& out) const;
  const std::string& version() const { return version_; }  // first line of --version
  const std::filesystem::path& object_dir() const { return object_dir_; }

 private:
  CpuCompilerSettings settings_;
  std::string version_;
  std::string identity_;  // full --version output + ABI header: part of every cache key
  std::filesystem::path object_dir_;
};

/// $XDG_CACHE_HOME/kmcts, else ~/.cache/kmcts, else <tmp>/kmcts-cache.
std::filesystem::path default_cache_dir();

}  // namespace kmcts
