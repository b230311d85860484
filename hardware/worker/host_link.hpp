#pragma once
// A trusted worker's link to one kernel host: the process that loads and calls one kernel (the
// reference or the candidate) so that the worker never runs either kernel's code
// (kmcts-cpu-host, kmcts-cuda-host). Started with posix_spawn, its requests and replies one
// JSON line each over two pipes (its fds 0 and 3), with nothing else of the worker's inherited
// but the descriptors named. Starting a host makes the worker drop every capability it holds
// (a user namespace's root holds them all there) and become not dumpable, so a host under the
// same uid cannot read its memory or environment, nor ptrace it. The host is untrusted: its
// replies are bounded and parsed defensively.
#include <sys/types.h>

#include <functional>
#include <map>
#include <utility>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kmcts::worker {

/// The host is gone or broke the protocol: what it was doing and why (its exit, its signal,
/// a malformed reply). `candidate` says whose host it was.
struct HostFailure : std::runtime_error {
  HostFailure(bool candidate, const std::string& what, std::string signal = "", std::string phase = "")
      : std::runtime_error(what), candidate(candidate), signal(std::move(signal)), phase(std::move(phase)) {}
  bool candidate;
  std::string signal;  // "SIGSEGV" when a signal ended the host
  std::string phase;
};

/// The worker runs under a profiler (Nsight Compute, compute-sanitizer: the "profile" job): it
/// and the hosts it starts stay dumpable. The profiler runs confined under their uid without
/// capabilities, and reads their /proc files as it attaches ("Launching the target application
/// failed" on the H100 while the worker made itself non-dumpable). Its hosts are not stopped
/// between requests either (a stopped host cannot answer its profiler). Nothing of a profile run
/// is scored; a host still cannot trace or write the worker (its seccomp filter and Landlock).
void set_under_profiler(bool profiled);

/// The worker's verdict on a host's failure: a candidate's is a crash ("crash: SIGSEGV" when a
/// signal ended it, as a worker killed by one reads), the reference's an infra_error.
nlohmann::json host_failure_verdict(const HostFailure& f);

class HostLink {
 public:
  /// Starts `binary` with `args`, beside the worker's own binary; `fds` maps a descriptor
  /// number in the host to one of the worker's (numbers above 3); `env` ("NAME=value") is added
  /// to the worker's environment for it. Throws HostFailure.
  HostLink(bool candidate, const std::string& binary, const std::vector<std::string>& args,
           const std::map<int, int>& fds = {}, const std::vector<std::string>& env = {});
  /// Forks (no exec) and runs `serve` in the child with requests on fd 0 and replies on fd 3,
  /// every other descriptor above 2 closed; the child ends when `serve` returns. For a worker
  /// that forks before it holds anything its host may not see (the CPU worker).
  HostLink(bool candidate, const std::function<void()>& serve);
  ~HostLink();
  HostLink(const HostLink&) = delete;
  HostLink& operator=(const HostLink&) = delete;

  /// Waits for the host's first line: {"ready":true,...} (returned), or {"load_error":MESSAGE}
  /// (kept in load_error(), the host ended), or anything else (HostFailure).
  nlohmann::json wait_ready();
  const std::string& load_error() const { return load_error_; }
  /// One request, its reply. A reply {"fault": ...} is returned as is; a host that ended, or
  /// sent something that is not one JSON object under 1 MiB, or {"error": ...}, throws
  /// HostFailure.
  nlohmann::json request(const nlohmann::json& r, const std::string& phase);
  bool candidate() const { return candidate_; }
  pid_t pid() const { return pid_; }
  /// Ends the host in order: it runs again, reads the end of its requests and exits, within
  /// `timeout_s` (else it is killed). Returns how it ended ("exited 0", "killed: ...").
  std::string finish(double timeout_s);
  /// The host is stopped (SIGSTOP) from its ready line on, and runs only between a request and
  /// its reply: none of its threads can act while the other kernel is called or timed.
  [[noreturn]] void gone(const std::string& phase, const std::string& why);

 private:
  std::string read_line(const std::string& phase);
  void signal_host(int signal);

  bool candidate_;
  pid_t pid_ = -1;
  int to_host_ = -1, from_host_ = -1;
  std::string buffer_;
  std::string load_error_;
};

/// The path of `name` beside this process's own binary.
std::string beside_self(const std::string& name);

}  // namespace kmcts::worker
