#pragma once
// Compiles a kernel source into a shared object (the host C++ compiler for cpu kernels,
// nvcc for CUDA kernels), cached by content: sha256(source, flags, compiler --version, ABI
// headers). Many compiles may run at once, also of the same source: each works in its own
// temporary folder and publishes the result with an atomic rename, so a reader never sees
// half a file.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "hardware/evaluator.hpp"

namespace kmcts {

struct CompilerSettings {
  std::string compiler = "c++";
  std::filesystem::path cache_dir;  // the compiler keeps its files under cache_dir/<flavor name>
  double timeout_s = 120;
  int64_t memory_mb = 4096;         // a compiler on a huge unrolled source can eat a machine
  std::vector<std::string> extra_flags;  // the problem's compile_flags
};

/// What differs between kinds of kernels: the file name, the fixed flags, the ABI headers
/// (part of the cache key) and what the compiler's log says about resources.
struct CompilerFlavor {
  std::string name;                     // the cache subfolder: "cpu", "cuda"
  std::string source_name;              // "kernel.cpp", "kernel.cu": compiler messages name it
  std::vector<std::string> base_flags;  // before the problem's flags
  std::vector<std::filesystem::path> abi_headers;
  std::function<nlohmann::json(const std::string& log)> resources;  // null: none
};

class KernelCompiler {
 public:
  /// Runs `compiler --version` once; a compiler that cannot run is an InputError naming it
  /// (`option` is the config key that chose the compiler).
  KernelCompiler(CompilerSettings settings, CompilerFlavor flavor, std::string option = "evaluator.compiler");

  /// Never throws for a bad source: ok=false with the compiler's message in `log`.
  /// `more_flags` follow the problem's (e.g. the reference's -lcublas).
  BuildResult compile(const std::string& source, const std::vector<std::string>& more_flags = {}) const;

  /// The whole command line for a source file `src` and output `out`.
  std::vector<std::string> command(const std::string& src, const std::string& out,
                                   const std::vector<std::string>& more_flags = {}) const;
  const std::string& version() const { return version_; }  // first line of --version
  const std::filesystem::path& object_dir() const { return object_dir_; }

 private:
  nlohmann::json resources(const std::string& log, uintmax_t so_bytes) const;

  CompilerSettings settings_;
  CompilerFlavor flavor_;
  std::string version_;
  std::string identity_;  // full --version output + ABI headers: part of every cache key
  std::filesystem::path object_dir_;
};

/// $XDG_CACHE_HOME/kmcts, else ~/.cache/kmcts, else <tmp>/kmcts-cache.
std::filesystem::path default_cache_dir();

/// A problem's reference, built by the evaluator's compiler the first time a measurement asks
/// for it (whichever thread comes first; the others wait) and kept for the evaluator's life.
class LazyReference {
 public:
  const BuildResult& get(const KernelCompiler& compiler, const std::string& source, const std::vector<std::string>& flags) {
    std::lock_guard lock(mutex_);
    if (!built_) built_ = compiler.compile(source, flags);
    return *built_;
  }

 private:
  std::mutex mutex_;
  std::optional<BuildResult> built_;
};

}  // namespace kmcts
