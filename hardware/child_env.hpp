#pragma once
// The environment of every process kmcts starts (compilers, workers, harnesses, candidates,
// probes): an allow-list, never kmcts's whole environment. A generated kernel runs in some of
// these processes, and kmcts's environment holds the user's API keys.
//
// Passed: PATH, HOME, the locale (LANG, LANGUAGE, LC_*, TZ), TMPDIR, what finds and configures
// the toolchains and libraries (LD_LIBRARY_PATH, CUDA_*, NVIDIA_*, CUDNN_*, NVCC_*, TORCH_*,
// PYTORCH_*, TRITON_*, HIP_*, ROCM_*, HSA_*, PYTHONPATH, PYTHONHOME, VIRTUAL_ENV, CONDA_*,
// PYENV_*, OMP_*, MKL_*, OPENBLAS_*, CC, CXX, CCACHE_*, KMCTS_*), and the names
// evaluator.env_passthrough gives. Never passed unless evaluator.env_passthrough names them:
// variables ending in _KEY, _TOKEN, _SECRET, _PASSWORD or _CREDENTIALS, and AWS_*, whatever
// prefix they have.
#include <string>
#include <vector>

namespace kmcts {

/// The variables passed through besides the allow-list (from evaluator.env_passthrough: names,
/// or prefixes ending in '*'), for every child started from now on.
void set_env_passthrough(const std::vector<std::string>& names);

/// Whether the variable NAME reaches children.
bool passes_to_children(const std::string& name);

/// The children's environment, "NAME=value" strings, from this process's environment now.
std::vector<std::string> child_environment();

/// The same as an execve-ready array (its strings owned by `storage`).
std::vector<char*> child_envp(std::vector<std::string>& storage);

}  // namespace kmcts
