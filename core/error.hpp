#pragma once
// Errors that reach the user. The command line maps them to exit codes:
// InputError -> 2 (bad usage, config, problem folder), RunError -> 1 (the run itself failed).
#include <stdexcept>
#include <string>

namespace kmcts {

/// Bad input from the user: a config key, a problem folder, a command-line value.
/// The message names the culprit (file, key, value) in one line.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The run could not complete (seed kernel fails, store cannot be written, ...).
struct RunError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace kmcts
