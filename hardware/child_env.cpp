#include "hardware/child_env.hpp"

#include <mutex>

#include "core/options.hpp"
#include "core/text.hpp"

extern char** environ;

KMCTS_OPTION("evaluator.env_passthrough", String, "", std::nullopt, std::nullopt,
             "Comma-separated environment variables (or prefixes ending in *) that compilers, workers, harnesses and "
             "candidates get besides kmcts's allow-list (PATH, HOME, locale, CUDA/torch/toolchain variables); "
             "secrets (*_KEY, *_TOKEN, *_SECRET, *_PASSWORD, *_CREDENTIALS, AWS_*) reach them only when named here")

namespace kmcts {
namespace {

std::mutex g_mutex;
std::vector<std::string> g_passthrough;  // guarded by g_mutex

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_secret(const std::string& name) {
  for (const char* suffix : {"_KEY", "_TOKEN", "_SECRET", "_PASSWORD", "_CREDENTIALS"})
    if (ends_with(name, suffix)) return true;
  return starts_with(name, "AWS_");
}

bool allowed(const std::string& name) {
  for (const char* exact : {"PATH", "HOME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "LD_LIBRARY_PATH", "PYTHONPATH",
                            "PYTHONHOME", "VIRTUAL_ENV", "CC", "CXX"})
    if (name == exact) return true;
  for (const char* prefix : {"LC_", "CUDA_", "NVIDIA_", "CUDNN_", "NVCC_", "TORCH_", "PYTORCH_", "TRITON_", "HIP_",
                             "ROCM_", "HSA_", "CONDA_", "PYENV_", "OMP_", "MKL_", "OPENBLAS_", "CCACHE_", "KMCTS_"})
    if (starts_with(name, prefix)) return true;
  return false;
}

bool named(const std::string& name, const std::vector<std::string>& passthrough) {
  for (const std::string& p : passthrough) {
    if (!p.empty() && p.back() == '*' ? starts_with(name, p.substr(0, p.size() - 1).c_str()) : name == p) return true;
  }
  return false;
}

}  // namespace

void set_env_passthrough(const std::vector<std::string>& names) {
  std::lock_guard lock(g_mutex);
  g_passthrough = names;
}

bool passes_to_children(const std::string& name) {
  std::vector<std::string> passthrough;
  {
    std::lock_guard lock(g_mutex);
    passthrough = g_passthrough;
  }
  if (named(name, passthrough)) return true;
  return allowed(name) && !is_secret(name);
}

std::vector<std::string> child_environment() {
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e) {
    const std::string entry = *e;
    const size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    if (passes_to_children(entry.substr(0, eq))) out.push_back(entry);
  }
  return out;
}

std::vector<char*> child_envp(std::vector<std::string>& storage) {
  storage = child_environment();
  std::vector<char*> envp;
  envp.reserve(storage.size() + 1);
  for (std::string& s : storage) envp.push_back(s.data());
  envp.push_back(nullptr);
  return envp;
}

}  // namespace kmcts
