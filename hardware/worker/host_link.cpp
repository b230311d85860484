#include "hardware/worker/host_link.hpp"

#include <atomic>
#include <fcntl.h>
#include <linux/capability.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>

#include <fmt/format.h>

extern char** environ;

namespace kmcts::worker {
namespace {

using nlohmann::json;
constexpr size_t kMaxReplyBytes = size_t{1} << 20;

std::atomic<bool> g_under_profiler{false};  // set_under_profiler()

/// Drops every capability this process holds, and what an exec could give back (the bounding
/// set; needs CAP_SETPCAP, which is dropped last). Under a user namespace the worker is its
/// root: without this, a host of the same uid holds CAP_SYS_PTRACE there, and not being dumpable
/// would not keep it from the worker's /proc/PID/mem (hostile.sh attack 6 as uid 1000 read it).
/// Without capabilities to begin with (a leased uid) every call fails harmlessly.
void drop_every_capability() {
  for (int cap = 0; cap < 64; ++cap) prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct none[_LINUX_CAPABILITY_U32S_3] = {};
  syscall(SYS_capset, &header, none);
}

/// What the worker does before each host: nothing under its uid may read its memory or
/// environment, nor ptrace it; a host that died makes a write fail (EPIPE), not end the worker;
/// the two pipes (requests, replies).
void before_a_host(bool candidate, int request[2], int reply[2]) {
  drop_every_capability();
  if (!g_under_profiler.load()) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  signal(SIGPIPE, SIG_IGN);
  if (pipe2(request, O_CLOEXEC) != 0 || pipe2(reply, O_CLOEXEC) != 0)
    throw HostFailure(candidate, std::string("pipe: ") + strerror(errno));
}

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) return fmt::format("killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  return "ended";
}

}  // namespace

void set_under_profiler(bool profiled) { g_under_profiler.store(profiled); }

std::string beside_self(const std::string& name) {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find the worker's own binary: " + ec.message());
  return (self.parent_path() / name).string();
}

HostLink::HostLink(bool candidate, const std::string& binary, const std::vector<std::string>& args,
                   const std::map<int, int>& fds, const std::vector<std::string>& env)
    : candidate_(candidate) {
  int request[2], reply[2];
  before_a_host(candidate, request, reply);
  std::vector<std::string> all = {binary};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  int highest = 3;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, request[0], 0);
  posix_spawn_file_actions_adddup2(&actions, reply[1], 3);
  for (const auto& [target, source] : fds) {
    posix_spawn_file_actions_adddup2(&actions, source, target);
    highest = std::max(highest, target);
  }
  posix_spawn_file_actions_addclosefrom_np(&actions, highest + 1);  // the worker's result channel above all
  std::vector<std::string> extra = env;
  std::vector<char*> envp;
  for (char** e = environ; *e; ++e) {
    const std::string_view entry(*e);
    const bool replaced = std::any_of(extra.begin(), extra.end(), [&](const std::string& x) {
      return entry.substr(0, entry.find('=') + 1) == std::string_view(x).substr(0, x.find('=') + 1);
    });
    if (!replaced) envp.push_back(*e);
  }
  for (auto& x : extra) envp.push_back(x.data());
  envp.push_back(nullptr);
  const int rc = posix_spawn(&pid_, binary.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(request[0]);
  close(reply[1]);
  to_host_ = request[1];
  from_host_ = reply[0];
  if (rc != 0) {
    pid_ = -1;
    throw HostFailure(candidate, fmt::format("cannot start {}: {}", binary, strerror(rc)));
  }
}

HostLink::HostLink(bool candidate, const std::function<void()>& serve) : candidate_(candidate) {
  int request[2], reply[2];
  before_a_host(candidate, request, reply);  // inherited by the child, which never execs
  std::fflush(nullptr);
  pid_ = fork();
  if (pid_ < 0) throw HostFailure(candidate, std::string("fork: ") + strerror(errno));
  if (pid_ == 0) {
    if (dup2(request[0], 0) < 0 || dup2(reply[1], 3) < 0) std::_Exit(4);
    close_range(4, ~0U, 0);  // the worker's result channel above all
    serve();
    std::fflush(nullptr);
    std::_Exit(0);
  }
  close(request[0]);
  close(reply[1]);
  to_host_ = request[1];
  from_host_ = reply[0];
}

json HostLink::wait_ready() {
  const json ready = json::parse(read_line("startup"), nullptr, false);
  if (ready.is_object() && ready.contains("load_error")) {
    load_error_ = ready["load_error"].is_string() ? ready["load_error"].get<std::string>() : "cannot be loaded";
    return ready;
  }
  if (ready.is_object() && ready.contains("error") && ready["error"].is_string())
    throw HostFailure(candidate_, ready["error"].get<std::string>());
  if (!ready.is_object() || !ready.contains("ready")) gone("startup", "its first reply was not the ready line");
  signal_host(SIGSTOP);
  return ready;
}

HostLink::~HostLink() {
  if (to_host_ >= 0) close(to_host_);
  if (from_host_ >= 0) close(from_host_);
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

std::string HostLink::finish(double timeout_s) {
  if (pid_ <= 0) return "not running";
  if (to_host_ >= 0) close(to_host_), to_host_ = -1;  // its next_request() sees the end
  signal_host(SIGCONT);
  int status = 0;
  for (double waited = 0; waited < timeout_s; waited += 0.01) {
    const pid_t done = waitpid(pid_, &status, WNOHANG);
    if (done == pid_) {
      pid_ = -1;
      return describe_status(status);
    }
    usleep(10000);
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return fmt::format("killed after {:.0f} s: it did not exit", timeout_s);
}

void HostLink::gone(const std::string& phase, const std::string& why) {
  std::string how = why, signal;
  if (pid_ > 0) {
    int status = 0;
    kill(pid_, SIGKILL);  // a host that broke the protocol is ended too
    if (waitpid(pid_, &status, 0) == pid_ && why.empty()) {
      how = describe_status(status);
      if (WIFSIGNALED(status) && sigabbrev_np(WTERMSIG(status)))
        signal = std::string("SIG") + sigabbrev_np(WTERMSIG(status));
    }
    pid_ = -1;
  }
  throw HostFailure(candidate_,
                    fmt::format("the {}'s process {} ({})", candidate_ ? "candidate" : "reference",
                                how.empty() ? "ended" : how, phase),
                    signal, phase);
}

json host_failure_verdict(const HostFailure& f) {
  if (!f.candidate) return {{"verdict", "infra_error"}, {"message", f.what()}, {"details", json::object()}};
  json details = {{"host", f.what()}, {"phase", f.phase}};
  if (!f.signal.empty()) details["signal"] = f.signal;
  return {{"verdict", "crash"},
          {"message", f.signal.empty() ? std::string("crash: ") + f.what() : "crash: " + f.signal},
          {"details", details}};
}

std::string HostLink::read_line(const std::string& phase) {
  for (;;) {
    if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    if (buffer_.size() > kMaxReplyBytes) gone(phase, "sent a reply over 1 MiB");
    char chunk[8192];
    const ssize_t n = ::read(from_host_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) gone(phase, "");
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

void HostLink::signal_host(int signal) {
  // Under a profiler the host runs on between requests: its injected profiler talks to the
  // profiler's front end after a kernel, and a stopped host would hold both up. Nothing is
  // timed in a profile job, which is what stopping it guards.
  if (signal == SIGSTOP && g_under_profiler.load()) return;
  if (pid_ > 0) kill(pid_, signal);
}

json HostLink::request(const json& r, const std::string& phase) {
  signal_host(SIGCONT);
  const std::string text = r.dump() + "\n";
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(to_host_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) gone(phase, "");
    done += static_cast<size_t>(n);
  }
  const std::string line = read_line(phase);
  signal_host(SIGSTOP);
  json reply = json::parse(line, nullptr, false);
  if (!reply.is_object()) gone(phase, "sent a reply that is not a JSON object");
  if (reply.contains("error")) gone(phase, "failed: " + reply["error"].dump().substr(0, 300));
  return reply;
}

}  // namespace kmcts::worker
