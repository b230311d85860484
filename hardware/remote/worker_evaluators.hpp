#pragma once
// A worker rank's problems and their evaluators: one evaluator per (problem, device), made on
// first use from the problem's bundle with the device put in its options (evaluator.cuda.gpus,
// evaluator.kernelbench.device), so each measures on the GPU the job was given. Thread-safe.
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "hardware/evaluator.hpp"

namespace kmcts::remote {

class WorkerEvaluators {
 public:
  /// `scratch`: where problem files are written; `gpus`: whether devices are GPUs.
  WorkerEvaluators(std::filesystem::path scratch, bool gpus) : scratch_(std::move(scratch)), gpus_(gpus) {}
  /// Writes and loads a `problem` message's problem; a problem that does not load is kept
  /// as its error, which every job of it then reports.
  void add_problem(const nlohmann::json& message);
  /// The evaluator of problem `key` on `device`. std::runtime_error for an unknown key or a
  /// problem that did not load.
  Evaluator& get(const std::string& key, int device);
  void clear();

 private:
  // Made once, outside the lock of the whole map: a CUDA evaluator's start (device probe,
  // reference build) must not hold up the jobs of other devices and problems.
  struct Slot {
    std::once_flag made;
    std::unique_ptr<Evaluator> evaluator;
    std::string error;
  };
  struct Entry {
    std::optional<Problem> problem;
    Config config;
    std::string error;
    std::map<int, std::shared_ptr<Slot>> by_device;
  };
  std::filesystem::path scratch_;
  bool gpus_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Entry>> entries_;
};

}  // namespace kmcts::remote
