#include "hardware/kernelbench/kernelbench_hygiene.hpp"

#include <map>

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

// hygiene.py over these files (absolute paths), within `timeout_s`.
SandboxResult run_hygiene_process(const std::vector<std::filesystem::path>& files, const KernelBenchSettings& settings,
                                  double timeout_s) {
  const std::filesystem::path harness = data_dir("kernelbench", KMCTS_KERNELBENCH_DIR) / "hygiene.py";
  SandboxLimits limits;
  limits.timeout_s = timeout_s;
  limits.max_output_bytes = 4u << 20;
  std::vector<std::string> argv = {settings.python, harness.string(), "--tolerance", settings.tolerance, "--device",
                                   settings.device};
  for (const auto& f : files) argv.push_back(f.string());
  return run_sandboxed(argv, limits, harness.parent_path());
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

HygieneBatch prefill_hygiene(const std::vector<std::filesystem::path>& problem_files, const KernelBenchSettings& settings) {
  HygieneBatch batch;
  std::map<std::string, std::filesystem::path> todo;  // absolute problem path -> its cache file
  for (const auto& f : problem_files) try {
      const std::filesystem::path cached = cache_file(f, settings);
      if (std::filesystem::exists(cached))
        ++batch.cached_before;
      else
        todo.emplace(std::filesystem::absolute(f).string(), cached);
    } catch (const std::exception&) {  // unreadable: left to the problem's own check, which says why
      ++batch.failed;
    }
  if (todo.empty()) return batch;
  std::vector<std::filesystem::path> files;
  for (const auto& [path, cached] : todo) files.emplace_back(path);
  // Each problem's own limit, spread: a check takes seconds, and whatever the batch did not
  // reach is checked alone afterwards.
  const SandboxResult run = run_hygiene_process(files, settings, settings.timeout_s + 30.0 * files.size());
  batch.seconds = run.wall_seconds;
  for (const std::string& text : split_list(run.out, '\n')) {
    nlohmann::json line;
    try {
      line = nlohmann::json::parse(text);
    } catch (const std::exception&) {
      continue;  // the candidate-free harness prints only JSON lines; anything else is not ours
    }
    const auto it = todo.find(line.value("problem", std::string()));
    if (it == todo.end()) continue;
    if (line.contains("error")) {
      ++batch.failed;
      continue;
    }
    line.erase("problem");
    std::filesystem::create_directories(it->second.parent_path());
    write_file_atomic(it->second, line.dump() + "\n");
    ++batch.checked;
  }
  return batch;
}

nlohmann::json run_hygiene(const std::filesystem::path& problem_file, const KernelBenchSettings& settings) {
  const SandboxResult run = run_hygiene_process({std::filesystem::absolute(problem_file)}, settings, settings.timeout_s);
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
