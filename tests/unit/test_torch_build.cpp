// Which torch the KernelBench harness's interpreter has, and the refusal of HIP prompts
// (agents.llm.kernelbench_backend=hip) where it is not a ROCm build: stand-in interpreters
// answer as the real torch builds do (torch.version.cuda / .hip), or fail to import it.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <sys/stat.h>

#include "core/options.hpp"
#include "core/error.hpp"
#include "core/problem.hpp"
#include "hardware/kernelbench/torch_build.hpp"
#include "search/coordinator.hpp"

using namespace kmcts;
namespace fs = std::filesystem;

namespace {

// An executable that ignores its arguments and prints `out` to stdout (or `err` to stderr, exit 1).
std::string stand_in(const std::string& name, const std::string& out, const std::string& err = "") {
  const fs::path dir = fs::temp_directory_path() / ("kmcts-torch-build-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path script = dir / name;
  std::ofstream(script) << "#!/bin/sh\n"
                        << (err.empty() ? "cat <<'END'\n" + out + "\nEND\n" : "cat >&2 <<'END'\n" + err + "\nEND\nexit 1\n");
  ::chmod(script.c_str(), 0755);
  return script.string();
}

Config hip_search(const std::string& python, const std::string& backend = "llm") {
  Config c;
  c.set("agents.llm.kernelbench_backend=hip");
  c.set("agents.backend=" + backend);
  c.set_value("evaluator.kernelbench.python", python, "test");
  return c;
}

Problem of_kind(const std::string& kind) {
  Problem p;
  p.name = "19_ReLU";
  p.kind = kind;
  return p;
}

}  // namespace

TEST_CASE("torch build: the probe's answer is read as the build it names") {
  const TorchBuild cuda = parse_torch_build(R"({"version": "2.6.0+cu124", "cuda": "12.4", "hip": null})");
  CHECK(cuda.imported);
  CHECK(cuda.hip.empty());
  CHECK(cuda.describe() == "torch 2.6.0+cu124 (CUDA 12.4)");
  CHECK(cuda.devices == 0);
  CHECK(parse_torch_build(R"({"version": "2.6.0+cu124", "cuda": "12.4", "hip": null, "devices": 8})").devices == 8);
  const TorchBuild rocm = parse_torch_build(R"({"version": "2.6.0+rocm6.2", "cuda": null, "hip": "6.2.41133-dd7f95766"})");
  CHECK(rocm.describe() == "torch 2.6.0+rocm6.2 (ROCm/HIP 6.2.41133-dd7f95766)");
  CHECK(parse_torch_build(R"({"version": "1.13.0a0", "cuda": null, "hip": null})").describe() == "torch 1.13.0a0 (CPU only)");
  const TorchBuild junk = parse_torch_build("Segmentation fault");
  CHECK_FALSE(junk.imported);
  CHECK(junk.describe().find("unexpected answer: Segmentation fault") != std::string::npos);
}

TEST_CASE("torch build: HIP prompts are refused unless the harness's torch is a ROCm build") {
  const std::string cuda = stand_in("python-cuda", R"({"version": "2.6.0+cu124", "cuda": "12.4", "hip": null})");
  const std::string rocm = stand_in("python-rocm", R"({"version": "2.6.0+rocm6.2", "cuda": null, "hip": "6.2.41133"})");
  const std::string none = stand_in("python-none", "", "ModuleNotFoundError: No module named 'torch'");

  std::string message;
  try {
    SearchParts::check_kernelbench_backend(of_kind("kernelbench"), hip_search(cuda));
  } catch (const InputError& e) {
    message = e.what();
  }
  CHECK(message.find("agents.llm.kernelbench_backend=hip") != std::string::npos);
  CHECK(message.find("torch 2.6.0+cu124 (CUDA 12.4)") != std::string::npos);
  CHECK(message.find(cuda) != std::string::npos);  // the interpreter named

  message.clear();
  try {
    SearchParts::check_kernelbench_backend(of_kind("kernelbench"), hip_search(none));
  } catch (const InputError& e) {
    message = e.what();
  }
  CHECK(message.find("no torch (ModuleNotFoundError: No module named 'torch')") != std::string::npos);

  CHECK_NOTHROW(SearchParts::check_kernelbench_backend(of_kind("kernelbench"), hip_search(rocm)));
  // No agent reads the HIP prompts, or the problem is not KernelBench's: nothing to refuse.
  CHECK_NOTHROW(SearchParts::check_kernelbench_backend(of_kind("kernelbench"), hip_search(cuda, "rule")));
  CHECK_NOTHROW(SearchParts::check_kernelbench_backend(of_kind("cuda"), hip_search(cuda)));
  Config planner_only = hip_search(cuda, "rule");
  planner_only.set("agents.planner=llm");
  CHECK_THROWS_AS(SearchParts::check_kernelbench_backend(of_kind("kernelbench"), planner_only), InputError);
  fs::remove_all(fs::path(cuda).parent_path());
}
