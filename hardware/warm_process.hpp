#pragma once
// A child process kept running between jobs: one request line in on its stdin, one reply line
// out on its stdout (the warm KernelBench harness, harness/serve.py). Its stderr goes to an
// unlinked file, emptied at each request, and each request gets what was written there while
// it ran (a flood over 256 MiB kills the child). A request that
// times out kills the child's whole process group; so does the destructor, after closing the
// child's stdin and giving it a moment to end on its own. If kmcts dies, the child reads end of
// file on its stdin and ends.
#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kmcts {

class WarmProcess {
 public:
  /// Starts argv (argv[0] searched in PATH) in a process group of its own, in `cwd` (empty = ours).
  /// Throws std::runtime_error when it cannot be started.
  WarmProcess(const std::vector<std::string>& argv, const std::filesystem::path& cwd);
  ~WarmProcess();
  WarmProcess(const WarmProcess&) = delete;
  WarmProcess& operator=(const WarmProcess&) = delete;

  struct Reply {
    std::optional<std::string> line;  // the reply line, without its newline; nullopt when none came
    bool timed_out = false;           // no reply within the limit: the child's group was killed
    bool oversized = false;           // the reply was longer than allowed: killed
    bool log_flood = false;           // it wrote more than 256 MiB on stderr during the request: killed
    bool died = false;                // the child ended before replying
    int exit_code = -1;               // when died by exiting
    int signal = 0;                   // when died by a signal
    std::string log;                  // its stderr during the request (the last max_log bytes)
    double seconds = 0;               // wall clock of the request
  };

  /// Sends `line` (a newline is added) and waits up to timeout_s for one reply line.
  Reply request(const std::string& line, double timeout_s, size_t max_reply_bytes = 64u << 20,
                size_t max_log_bytes = 1u << 20);

  /// Still running and able to take a request (not killed, not ended, no request failed).
  bool usable() const { return usable_; }
  pid_t pid() const { return pid_; }
  /// Output past the last reply line: more than was asked for.
  bool has_unread_output() const { return !pending_.empty(); }
  /// The child's stderr so far (the last max_bytes): why it ended, when it ended unasked.
  std::string log_tail(size_t max_bytes = 1u << 20) const;

 private:
  void kill_group();
  bool exited() const;  // ended (not reaped yet)
  void reap(Reply& reply);
  pid_t pid_ = -1;
  int stdin_fd_ = -1, stdout_fd_ = -1, log_fd_ = -1;
  bool usable_ = false;
  bool reaped_ = false;
  std::string pending_;  // read past the last reply line
};

}  // namespace kmcts
