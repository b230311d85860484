#pragma once
// A problem as it travels to the worker ranks: its files (the folder, or the one
// KernelBench-format file) and the evaluator.* options its evaluator is made with, under a key that is the
// hash of both. Rank 0 sends a bundle once to each worker; the worker writes it under its own
// scratch folder and loads it as a local problem.
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "core/options.hpp"
#include "core/problem.hpp"

namespace kmcts::remote {

struct ProblemBundle {
  std::string key;    // sha256 of files + evaluator options
  nlohmann::json message;  // the body of a `problem` message (messages.hpp)
  size_t bytes = 0;   // total size of the files
};

/// Reads the problem's files. InputError when a file cannot be read or they are larger
/// than max_bytes together.
ProblemBundle bundle_problem(const Problem& problem, const Config& config, size_t max_bytes);

/// Writes a `problem` message's files under root/<key>/ and returns the path to load
/// (load_problem). std::runtime_error for a path that is absolute or leaves the folder.
std::filesystem::path materialize(const nlohmann::json& problem_message, const std::filesystem::path& root);

}  // namespace kmcts::remote
