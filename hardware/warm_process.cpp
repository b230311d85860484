#include "hardware/warm_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "hardware/child_env.hpp"
#include "hardware/sandbox.hpp"

namespace kmcts {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kGraceOnClose = std::chrono::seconds(2);  // to end on its own once its stdin closes
constexpr size_t kMaxLogBytes = 256u << 20;               // stderr of one request; more kills it

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// A file nobody else can open: the child's stderr, read back by offset.
int anonymous_file() {
  char name[] = "/tmp/kmcts-warm-XXXXXX";
  const int fd = mkostemp(name, O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(fmt::format("cannot create a log file: {}", std::strerror(errno)));
  ::unlink(name);
  return fd;
}

off_t file_size(int fd) {
  const off_t end = ::lseek(fd, 0, SEEK_END);
  return end < 0 ? 0 : end;
}

std::string read_range(int fd, off_t from, off_t to, size_t max_bytes) {
  if (to - from > static_cast<off_t>(max_bytes)) from = to - static_cast<off_t>(max_bytes);
  std::string text(static_cast<size_t>(std::max<off_t>(0, to - from)), '\0');
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::pread(fd, text.data() + got, text.size() - got, from + static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  text.resize(got);
  return text;
}

// Writes all of `text`; false when the reader is gone. SIGPIPE is held back in this thread (and
// a pending one taken) so that a child that died makes a false here, not the end of kmcts.
bool write_all(int fd, const std::string& text) {
  sigset_t pipe_only, before;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_only, &before);
  bool ok = true;
  for (size_t sent = 0; sent < text.size();) {
    const ssize_t n = ::write(fd, text.data() + sent, text.size() - sent);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = false;
      break;
    }
    sent += static_cast<size_t>(n);
  }
  if (!ok) {
    const timespec now{0, 0};
    while (sigtimedwait(&pipe_only, nullptr, &now) == SIGPIPE) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  return ok;
}

}  // namespace

WarmProcess::WarmProcess(const std::vector<std::string>& argv, const std::filesystem::path& cwd) {
  if (argv.empty()) throw std::invalid_argument("WarmProcess: empty argv");
  const std::string program = find_program(argv[0]);
  if (program.empty()) throw std::runtime_error(fmt::format("'{}' not found in PATH", argv[0]));
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0) throw std::runtime_error(fmt::format("pipe: {}", std::strerror(errno)));
  if (pipe2(out, O_CLOEXEC) != 0) {
    ::close(in[0]), ::close(in[1]);
    throw std::runtime_error(fmt::format("pipe: {}", std::strerror(errno)));
  }
  log_fd_ = anonymous_file();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, log_fd_, 2);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &all);
  posix_spawnattr_setpgroup(&attributes, 0);  // its own group: a kill reaches what it started
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_storage;
  const std::vector<char*> envp = child_envp(env_storage);  // never kmcts's whole environment
  const int rc = posix_spawn(&pid_, program.c_str(), &actions, &attributes, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  ::close(in[0]), ::close(out[1]);
  stdin_fd_ = in[1], stdout_fd_ = out[0];
  if (rc != 0) {
    close_fd(stdin_fd_), close_fd(stdout_fd_), close_fd(log_fd_);
    pid_ = -1;
    throw std::runtime_error(fmt::format("cannot run '{}': {}", program, std::strerror(rc)));
  }
  fcntl(stdout_fd_, F_SETFL, fcntl(stdout_fd_, F_GETFL) | O_NONBLOCK);
  usable_ = true;
}

WarmProcess::~WarmProcess() {
  close_fd(stdin_fd_);  // end of file: the child ends when it is idle
  if (pid_ > 0 && !reaped_) {
    const auto deadline = Clock::now() + kGraceOnClose;
    while (!exited() && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    kill_group();  // it is not reaped yet, so neither its pid nor its group can have been reused
  }
  close_fd(stdout_fd_), close_fd(log_fd_);
}

void WarmProcess::kill_group() {
  if (pid_ <= 0 || reaped_) return;
  const pid_t init = first_child(pid_);  // a confined harness: its process namespace's init
  ::kill(-pid_, SIGKILL);  // the group (the spare candidate process included)
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  wait_exited(init);  // the namespace ends just after its keeper
  reaped_ = true;
  usable_ = false;
}

bool WarmProcess::exited() const {
  siginfo_t info{};  // WNOWAIT: the zombie stays, so a group kill after this is still safe
  return waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid_;
}

void WarmProcess::reap(Reply& reply) {
  if (reaped_) return;
  const pid_t init = first_child(pid_);
  ::kill(-pid_, SIGKILL);  // what it left behind in its group, before its pid can be reused
  int status = 0;
  pid_t got;
  do got = waitpid(pid_, &status, 0);
  while (got < 0 && errno == EINTR);
  wait_exited(init);
  reaped_ = true;
  usable_ = false;
  if (got == pid_ && WIFEXITED(status)) reply.exit_code = WEXITSTATUS(status);
  if (got == pid_ && WIFSIGNALED(status)) reply.signal = WTERMSIG(status);
}

std::string WarmProcess::log_tail(size_t max_bytes) const {
  return read_range(log_fd_, 0, file_size(log_fd_), max_bytes);
}

WarmProcess::Reply WarmProcess::request(const std::string& line, double timeout_s, size_t max_reply_bytes,
                                        size_t max_log_bytes) {
  Reply reply;
  const auto start = Clock::now();
  // Each request's stderr from the start of the file (it shares the child's file offset), so
  // a long-lived process's log does not grow without end.
  if (::ftruncate(log_fd_, 0) == 0) ::lseek(log_fd_, 0, SEEK_SET);
  const off_t log_from = 0;
  auto finish = [&] {
    reply.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    reply.log = read_range(log_fd_, log_from, file_size(log_fd_), max_log_bytes);
    return reply;
  };
  if (!usable_) {
    reply.died = true;
    return finish();
  }
  usable_ = false;  // until a reply line comes back
  if (!write_all(stdin_fd_, line + "\n")) {  // the child is gone
    reply.died = true;
    reap(reply);
    return finish();
  }
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  for (;;) {
    const size_t newline = pending_.find('\n');
    if (newline != std::string::npos) {
      reply.line = pending_.substr(0, newline);
      pending_.erase(0, newline + 1);
      usable_ = true;
      return finish();
    }
    if (pending_.size() > max_reply_bytes) {
      reply.oversized = true;
      kill_group();
      return finish();
    }
    const double left_ms = std::chrono::duration<double, std::milli>(deadline - Clock::now()).count();
    if (left_ms <= 0) {
      reply.timed_out = true;
      kill_group();
      return finish();
    }
    if (file_size(log_fd_) > static_cast<off_t>(kMaxLogBytes)) {  // a flood of output: a disk to fill
      reply.log_flood = true;
      kill_group();
      return finish();
    }
    pollfd fd{stdout_fd_, POLLIN, 0};
    const int ready = ::poll(&fd, 1, static_cast<int>(std::min(std::ceil(left_ms), 1000.0)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char buffer[65536];
    const ssize_t n = ::read(stdout_fd_, buffer, sizeof buffer);
    if (n > 0) {
      pending_.append(buffer, static_cast<size_t>(n));
    } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {  // end of file: it ended
      reply.died = true;
      reap(reply);
      return finish();
    }
  }
}

}  // namespace kmcts
