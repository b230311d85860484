#include "hardware/kernelbench/kernelbench_hygiene.hpp"

#include <fmt/format.h>

#include "core/files.hpp"
#include "core/hash.hpp"
#include "core/install_paths.hpp"
#include "hardware/compiler.hpp"
#include "core/text.hpp"
#include "hardware/sandbox.hpp"

namespace kmcts {

namespace {

// Where a problem file's findings are kept: by its content, the tolerance and the device kind
// (a GPU's findings hold for any GPU's; the CPU's only for the CPU).
std::filesystem::path cache_file(const std::filesystem::path& problem_file, const KernelBenchSettings& settings) {
  const std::filesystem::path root =
      std::filesystem::absolute(settings.cache_dir.empty() ? default_cache_dir() : std::filesystem::path(settings.cache_dir));
  return root / "kernelbench" / "hygiene" /
         fmt::format("{}-{}-{}.json", sha256_hex(read_file(problem_file)), settings.tolerance,
                     settings.device == "cpu" ? "cpu" : "gpu");
}

}  // namespace

nlohmann::json kernelbench_hygiene(const std::filesystem::path& problem_file, const KernelBenchSettings& settings) {
  std::filesystem::path cached;
  try {
    cached = cache_file(problem_file, settings);
    if (std::filesystem::exists(cached)) {
      nlohmann::json line = nlohmann::json::parse(read_file(cached));
      line["cached"] = true;
      return line;
    }
  } catch (const std::exception&) {  // an unreadable problem or cache entry: check it afresh
    cached.clear();
  }
  nlohmann::json line = run_hygiene(problem_file, settings);
  // Findings only: an error (a GPU out of memory, a timeout) may not happen again.
  if (!cached.empty() && !line.contains("error")) {
    std::filesystem::create_directories(cached.parent_path());
    write_file_atomic(cached, line.dump() + "\n");
  }
  return line;
}

nlohmann::json run_hygiene(const std::filesystem::path& problem_file, const KernelBenchSettings& settings) {
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
