#pragma once
// The prebuild of a KernelBench candidate's extensions (harness/prebuild.py imports it, so its
// module-level code runs): confined like every process that runs candidate code
// (hardware/confine.hpp), with a view of its own where the user's home is empty, its own
// extension folder the one writable place on disk, and what it needs (the harness, the
// candidate's file, Python's prefixes, the shared precompiled headers) bound in read-only.
// A precompiled torch header its flags lack is requested by the build (kb_cxx.py) and made
// here afterwards, outside the confinement, from checked flags: no candidate writes a header
// another candidate's build uses.
#include <filesystem>
#include <map>
#include <string>

#include "hardware/sandbox.hpp"

namespace kmcts {

struct PrebuildSpec {
  std::string python;                       // the interpreter (a name in PATH or a path)
  std::filesystem::path harness_dir;        // prebuild.py, kb_cxx.py, kb_nvcc.py
  std::filesystem::path candidate;          // the candidate's stored file
  std::filesystem::path extensions;         // its own extension folder, in the cache
  // The path its build sees that folder at (TORCH_EXTENSIONS_DIR): `extensions`, or a path in the
  // view's private /tmp where `extensions` is bound (the harness stages a copy at the same path).
  std::filesystem::path view_extensions;
  std::filesystem::path headers;            // the shared precompiled headers ("" = none)
  std::map<std::string, std::string> env;   // the build's variables (build_env)
  double timeout_s = 900;
};

/// Where `python`'s code lives (prefix, base prefix, user site, and the interpreter's own folder
/// when it is named by its path), asked once per interpreter:
/// bound into a view whose home is hidden (a virtual environment or a user install may sit there).
std::vector<std::string> python_folders(const std::string& python);

/// Runs the prebuild (confined when evaluator.confine holds), then makes the headers it
/// requested. The run's result as the sandbox gives it.
SandboxResult run_prebuild(const PrebuildSpec& spec);

}  // namespace kmcts
