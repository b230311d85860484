#pragma once
// Where the running program and the data it ships live: a build tree (data read from the
// source tree it was built from) or an installed bundle (`cmake --install build --prefix
// DIR`: DIR/bin, DIR/lib, DIR/share/kmcts), which may be carried to another machine.
#include <filesystem>
#include <string>

namespace kmcts {

/// The folder of the running executable.
std::filesystem::path executable_dir();

/// A data folder the program ships (ABI headers, prompts): <exe>/../share/kmcts/<relative>
/// when this is an installed bundle, else `source_default` (the source tree it was built
/// from). The bundle goes first so a carried copy never reads a stale source path.
std::filesystem::path data_dir(const std::string& relative, const std::filesystem::path& source_default);

}  // namespace kmcts
