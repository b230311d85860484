#pragma once
// Warm KernelBench harness processes (harness/serve.py) for one evaluator: started ahead, so an
// evaluation does not wait for Python's and CUDA's start; a hardened one is reused until it
// faults or says it retires; a faithful one serves one candidate, and the next is started when
// its measurement is over (see serve.py for why).
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hardware/warm_process.hpp"

namespace kmcts {

class WarmHarness {
 public:
  /// argv: the serve.py command line; reusable: a process may take more than one request.
  WarmHarness(std::vector<std::string> argv, std::filesystem::path cwd, bool reusable);

  /// Starts one process if none is idle or busy (the first build calls this). Never throws:
  /// a process that cannot start is reported by the request that needs it.
  void prestart();

  struct Outcome {
    WarmProcess::Reply reply;
    std::string start_error;  // non-empty: no process could be started
    bool forged = false;      // the reply line lacked the request's nonce: not the harness's own
  };
  /// One request (its JSON, plus a "nonce" the reply must carry) on an idle process, or a new
  /// one; the process goes back to the idle ones afterwards unless it failed, ended, said
  /// "retire" or wrote more than its reply.
  Outcome request(const nlohmann::json& request, double timeout_s);

 private:
  std::unique_ptr<WarmProcess> take();
  void give_back(std::unique_ptr<WarmProcess> process, bool retire);
  std::vector<std::string> argv_;
  std::filesystem::path cwd_;
  bool reusable_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<WarmProcess>> idle_;
  int busy_ = 0;
};

}  // namespace kmcts
