#pragma once
// How a worker reports, shared by the cpu and CUDA workers: one JSON line on a private copy
// of stdout (fd 1 is pointed at stderr, so whatever a kernel prints cannot corrupt the line
// the evaluator parses), and the shapes of its verdicts.
#include <string>

#include <nlohmann/json.hpp>

#include "hardware/worker/job.hpp"
#include "hardware/worker/tensors.hpp"

namespace kmcts::worker {

class ResultChannel {
 public:
  /// Keeps a private copy of stdout and points fd 1 at stderr; call first thing in main().
  ResultChannel();
  /// Writes `result` as one line on the private stdout.
  void send(const nlohmann::json& result) const;
  /// send(), then ends the process at once with `code` (std::_Exit): threads the candidate
  /// left running die with it instead of racing the teardown of the CUDA runtime or of
  /// static objects (a detached thread launching into a dead runtime segfaults, which would
  /// turn a reported verdict into a crash).
  [[noreturn]] void send_and_exit(const nlohmann::json& result, int code) const;

 private:
  int fd_;
};

/// {"verdict": name, "message": message, "details": details}.
nlohmann::json verdict(const std::string& name, const std::string& message,
                       nlohmann::json details = nlohmann::json::object());

/// A wrong_answer for mismatch `m` in `phase`, with `extra` merged into its details.
nlohmann::json wrong(const Mismatch& m, const std::string& phase, const nlohmann::json& extra = nlohmann::json::object());

/// {input name: its distribution in round `round`}.
nlohmann::json distributions_of(const Job& job, int round);

}  // namespace kmcts::worker
