#include "hardware/kernelbench/kernelbench_hygiene.hpp"

#include <fmt/format.h>

#include "core/install_paths.hpp"
#include "core/text.hpp"
#include "hardware/sandbox.hpp"

namespace kmcts {

nlohmann::json kernelbench_hygiene(const std::filesystem::path& problem_file, const KernelBenchSettings& settings) {
  const std::filesystem::path harness = data_dir("kernelbench", KMCTS_KERNELBENCH_DIR) / "hygiene.py";
  SandboxLimits limits;
  limits.timeout_s = settings.timeout_s;
  limits.max_output_bytes = 4u << 20;
  const SandboxResult run = run_sandboxed({settings.python, harness.string(), "--tolerance", settings.tolerance,
                                           "--device", settings.device,
                                           std::filesystem::absolute(problem_file).string()},
                                          limits, harness.parent_path());
  if (!run.started) return {{"error", "cannot run the hygiene check: " + run.error}};
  if (run.timed_out) return {{"error", fmt::format("the hygiene check gave no result within {} s", settings.timeout_s)}};
  try {
    nlohmann::json line = nlohmann::json::parse(last_line(run.out));
    line.erase("problem");
    return line;
  } catch (const std::exception&) {
    return {{"error", "the hygiene check gave no result: " + first_line(last_line(run.err))}};
  }
}

}  // namespace kmcts
