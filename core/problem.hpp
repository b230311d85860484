#pragma once
// A problem is a folder: problem.json, a trusted reference, a seed kernel (given, or a
// template rendered at the space's default point) and optionally a tunable space.
// Agents read it to propose variants; evaluators read it to build and check them.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/space.hpp"

namespace kmcts {

struct TensorSpec {
  std::string name;
  std::string dtype = "f32";            // f32 | f64
  std::vector<int64_t> shape;
  std::vector<std::string> distributions;  // inputs only: uniform, normal, negative, heavy_tailed
  int64_t numel() const;
};

struct Problem {
  std::filesystem::path dir;
  std::string name;
  std::string kind;  // "cpu", "cuda", "hip" or "kernelbench" (the evaluator of the same name runs it)
  std::string description;
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  double atol = 1e-4;
  double rtol = 1e-4;
  std::vector<std::string> compile_flags;  // added to the evaluator's base flags
  std::vector<std::string> reference_flags;  // the reference's build only (e.g. -lcublas)
  double flops = 0;                        // per call, for roofline reports; 0 = unknown
  double bytes = 0;
  std::string reference_source;            // contents of the reference file
  std::string seed_source;                 // the root of every search
  std::optional<std::string> template_source;
  std::optional<TunableSpace> space;
  nlohmann::json seed_meta = nlohmann::json::object();  // {"params": {...}} when rendered
  nlohmann::json raw;                      // problem.json as read
};

/// Loads and validates a problem folder, or a KernelBench-format file (below). Errors are
/// InputError naming the file and key.
Problem load_problem(const std::filesystem::path& dir);

/// Whether `path` is a KernelBench-format problem file (a .py file).
bool is_kernelbench_file(const std::filesystem::path& path);
/// A KernelBench-format problem: kind "kernelbench", the file as the reference, and as the seed
/// kernelbench_seed_source(file); no tensors, space or template (the harness draws the inputs
/// with get_inputs). InputError when the file lacks Model, get_inputs or get_init_inputs.
Problem load_kernelbench_problem(const std::filesystem::path& file);
/// The seed of a KernelBench-format problem: the reference file unchanged, plus
/// `class ModelNew(Model)` with no body of its own.
std::string kernelbench_seed_source(const std::string& reference);

}  // namespace kmcts
