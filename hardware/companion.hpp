#pragma once
// Companion executables (kmcts-cpu-worker, kmcts-cuda-worker, kmcts-cuda-probe) are
// installed next to the binary that runs them; test binaries may sit one folder below the
// build root.
#include <filesystem>
#include <optional>
#include <string>

#include "core/install_paths.hpp"

namespace kmcts {

/// `name` next to the running executable, or in its parent folder; nullopt if neither exists.
std::optional<std::filesystem::path> find_companion(const std::string& name);

/// A worker executable: `configured` (the value of option `option`) when set, else the
/// companion `name`. InputError naming the option, or saying `missing_hint`, when absent.
std::filesystem::path find_worker_executable(const std::string& configured, const std::string& name,
                                             const std::string& option, const std::string& missing_hint);

/// A toolkit's program (nvcc, hipcc, rocminfo): `configured` when set, else $ENV_VAR/bin/NAME,
/// else DEFAULT_ROOT/bin/NAME, else NAME (found on PATH when run), whichever exists first.
std::string find_toolkit_program(const std::string& configured, const std::string& name, const char* env_var,
                                 const std::filesystem::path& default_root);

}  // namespace kmcts
