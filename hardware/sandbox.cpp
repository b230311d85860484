#include "hardware/sandbox.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "hardware/child_env.hpp"
#include "hardware/confine.hpp"


namespace kmcts {
namespace {

using Clock = std::chrono::steady_clock;

/// After the child is gone, descendants that escaped its process group may still hold
/// its pipes; we wait this long for them before giving up on the rest of the output.
constexpr double kDrainSeconds = 1.0;
/// Poll tick when pidfd_open is unavailable (kernels older than 5.3): the latency we
/// add to noticing a child's exit.
constexpr int kFallbackTickMs = 10;
constexpr int kRssTickMs = 50;
constexpr double kExitWaitSeconds = 5.0;  // wait_exited()'s limit

/// Whether `dir` holds more than `max_bytes` of file data or `max_entries` entries (links not
/// followed); stops counting as soon as it does. A folder that cannot be read holds nothing.
bool folder_over(const std::filesystem::path& dir, uint64_t max_bytes, uint64_t max_entries) {
  namespace fs = std::filesystem;
  std::error_code ec;
  uint64_t bytes = 0, entries = 0;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (++entries > max_entries) return true;
    const fs::file_status st = it->symlink_status(ec);
    if (!ec && fs::is_regular_file(st)) bytes += it->file_size(ec);
    if (bytes > max_bytes) return true;
  }
  return false;
}

/// Resident bytes of the processes below `pid` (each thread's children,
/// /proc/PID/task/TID/children), walked breadth first with no limit on depth (a chain of forks
/// cannot hide memory below it), at most kMaxWalked processes; the first `first_counted` levels
/// (`pid` itself is level 0) are walked but not counted: a confined program runs two levels below
/// the child forked (the keeper and its process namespace's init, forks of kmcts that never
/// exec and would count kmcts's own pages). 0 when unreadable.
int64_t resident_bytes(pid_t pid, int first_counted) {
  constexpr size_t kMaxWalked = 65536;
  std::vector<std::pair<pid_t, int>> queue = {{pid, 0}};
  int64_t total = 0;
  char path[96];
  for (size_t next = 0; next < queue.size() && next < kMaxWalked; ++next) {
    const auto [process, level] = queue[next];
    if (level >= first_counted) {
      std::snprintf(path, sizeof path, "/proc/%d/statm", static_cast<int>(process));
      if (FILE* f = std::fopen(path, "r")) {
        long long size = 0, resident = 0;
        if (std::fscanf(f, "%lld %lld", &size, &resident) == 2) total += resident * sysconf(_SC_PAGESIZE);
        std::fclose(f);
      }
    }
    std::error_code ec;
    std::snprintf(path, sizeof path, "/proc/%d/task", static_cast<int>(process));
    for (const auto& task : std::filesystem::directory_iterator(path, ec)) {
      FILE* children = std::fopen((task.path() / "children").c_str(), "r");
      if (!children) continue;
      int child = 0;
      while (std::fscanf(children, "%d", &child) == 1) queue.emplace_back(child, level + 1);
      std::fclose(children);
    }
  }
  return total;
}

// Everything the child needs, prepared before fork: after fork in a multi-threaded
// parent only async-signal-safe calls are allowed (no malloc, no locks).
struct ChildPlan {
  const char* program = nullptr;
  char* const* argv = nullptr;
  const char* cwd = nullptr;
  int stdin_fd = -1, stdout_fd = -1, stderr_fd = -1, status_fd = -1;
  rlimit memory{};
  bool limit_memory = false;
  rlimit cpu{};
  bool limit_cpu = false;
  pid_t parent = 0;
  char* const* envp = nullptr;  // child_environment(): never kmcts's whole environment
  int program_fd = -1;  // confined: the program opened before the identity changes (fexecve)
  // "#!": run by path. fexecve would hand its interpreter /dev/fd/N, which close-on-exec has
  // closed by then (ENOENT), and a script that finds its files beside itself (hipcc) needs its path.
  bool program_is_script = false;
  const ConfinementPlan* confinement = nullptr;  // candidate code: confined before exec
};

// What the child reports on the status pipe when it cannot exec.
struct ChildFailure {
  int stage;  // 0 = chdir, 1 = exec, 2 = confinement (step names what)
  int error;
  const char* step;  // a static string: the same address in the parent (a forked copy)
};

[[noreturn]] void run_child(const ChildPlan& plan) {
  setpgid(0, 0);  // its own group, so a timeout kills every process it started
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // the forking thread blocks on us, so this fires only if we die
  if (getppid() != plan.parent) _exit(127);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  for (int s = 1; s < NSIG; ++s)
    if (s != SIGKILL && s != SIGSTOP) sigaction(s, &default_action, nullptr);
  if (plan.confinement) {
    // A confined child may write no file data (RLIMIT_FSIZE 0): such a write fails with EFBIG
    // instead of killing it (an ignored signal stays ignored across exec).
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGXFSZ, &ignore, nullptr);
  }
  dup2(plan.stdin_fd, 0);
  dup2(plan.stdout_fd, 1);
  dup2(plan.stderr_fd, 2);
#ifdef SYS_close_range
  // Descriptors other threads opened without O_CLOEXEC must not leak into the child.
  constexpr unsigned kCloseRangeCloexec = 1u << 2;  // CLOSE_RANGE_CLOEXEC
  syscall(SYS_close_range, 3u, ~0u, kCloseRangeCloexec);
#endif
  if (plan.limit_memory) setrlimit(RLIMIT_AS, &plan.memory);
  if (plan.limit_cpu) setrlimit(RLIMIT_CPU, &plan.cpu);
  ChildFailure failure{0, 0, ""};
  // The folder is entered and the program opened before the identity changes: the confined
  // identity may not traverse their ancestors (a private TMPDIR, a build under /root).
  if (plan.cwd && chdir(plan.cwd) != 0) {
    failure.error = errno;
  } else if (int err = plan.confinement ? apply_confinement(*plan.confinement, &failure.step) : 0; err != 0) {
    failure = {2, err, failure.step};
  } else if ((err = plan.confinement ? load_seccomp(*plan.confinement) : 0) != 0) {
    failure = {2, err, "seccomp"};
  } else {
    if (plan.program_fd >= 0 && !plan.program_is_script) fexecve(plan.program_fd, plan.argv, plan.envp);
    else execve(plan.program, plan.argv, plan.envp);
    failure = {1, errno, ""};
  }
  ssize_t ignored = write(plan.status_fd, &failure, sizeof failure);
  (void)ignored;
  _exit(127);
}

struct Pipe {
  int read = -1, write = -1;
  bool open() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return false;
    read = fds[0], write = fds[1];
    return true;
  }
  void close_read() { if (read >= 0) ::close(read), read = -1; }
  void close_write() { if (write >= 0) ::close(write), write = -1; }
  ~Pipe() { close_read(), close_write(); }
};

/// Appends what is readable now; returns false at end of file or on error.
bool drain_into(int fd, std::string& sink, size_t cap, bool& truncated) {
  char buffer[65536];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
      size_t room = sink.size() < cap ? cap - sink.size() : 0;
      sink.append(buffer, std::min(room, static_cast<size_t>(n)));
      if (static_cast<size_t>(n) > room) truncated = true;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return true;
    return false;
  }
}

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

int ms_until(Clock::time_point deadline) {
  double ms = std::ceil(std::chrono::duration<double, std::milli>(deadline - Clock::now()).count());
  return static_cast<int>(std::clamp(ms, 0.0, 1e9));
}

}  // namespace

pid_t first_child(pid_t pid) {
  char path[96];
  std::snprintf(path, sizeof path, "/proc/%d/task/%d/children", static_cast<int>(pid), static_cast<int>(pid));
  FILE* f = std::fopen(path, "r");
  if (!f) return 0;
  int child = 0;
  const bool got = std::fscanf(f, "%d", &child) == 1;
  std::fclose(f);
  return got ? static_cast<pid_t>(child) : 0;
}

void wait_exited(pid_t pid) {
  if (pid <= 0) return;
  const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(kExitWaitSeconds));
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  while (Clock::now() < until) {
    FILE* f = std::fopen(path, "r");
    if (!f) return;  // gone (reaped)
    char state = '?';
    const int got = std::fscanf(f, "%*d (%*[^)]) %c", &state);
    std::fclose(f);
    if (got != 1 || state == 'Z' || state == 'X') return;  // exited: a zombie holds no memory or device
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

std::string find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string dirs = path && *path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t begin = 0;
  while (begin <= dirs.size()) {
    size_t end = dirs.find(':', begin);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(begin, end - begin);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0 && std::filesystem::is_regular_file(candidate)) return candidate;
    begin = end + 1;
  }
  return {};
}

std::string signal_name(int signal_number) {
  static const struct { int number; const char* name; } kNames[] = {
      {SIGSEGV, "SIGSEGV"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},   {SIGILL, "SIGILL"},
      {SIGABRT, "SIGABRT"}, {SIGKILL, "SIGKILL"}, {SIGTERM, "SIGTERM"}, {SIGXCPU, "SIGXCPU"},
      {SIGXFSZ, "SIGXFSZ"}, {SIGPIPE, "SIGPIPE"}, {SIGSYS, "SIGSYS"},   {SIGTRAP, "SIGTRAP"},
      {SIGINT, "SIGINT"},   {SIGHUP, "SIGHUP"},   {SIGQUIT, "SIGQUIT"}, {SIGALRM, "SIGALRM"},
      {SIGUSR1, "SIGUSR1"}, {SIGUSR2, "SIGUSR2"}};
  for (const auto& entry : kNames)
    if (entry.number == signal_number) return entry.name;
  return "signal " + std::to_string(signal_number);
}

SandboxResult run_sandboxed(const std::vector<std::string>& argv, const SandboxLimits& limits,
                            const std::filesystem::path& cwd) {
  if (argv.empty()) throw std::invalid_argument("run_sandboxed: empty argv");
  SandboxResult result;
  const std::string program = find_program(argv[0]);
  if (program.empty()) {
    result.error = "'" + argv[0] + "' not found in PATH";
    return result;
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const std::string cwd_text = cwd.string();
  std::vector<std::string> env_storage = child_environment();
  // A uid of its own while it runs (root), its view of the file system, what it may write.
  std::optional<UidLease> lease;
  ConfinementPlan confinement;
  if (limits.confine) {
    static const bool said = [] {
      // What the kernel refuses here is said once, at the first confined child.
      if (const std::string& refused = confinement_support().refused; !refused.empty())
        std::fprintf(stderr, "kmcts: candidate processes are confined by %s only; refused here: %s\n",
                     confinement_support().summary().c_str(), refused.c_str());
      return true;
    }();
    (void)said;
    if (!limits.keep_uid) lease.emplace();
    confinement = confinement_for(limits, lease ? lease->uid() : geteuid());
    for (const Bind& b : confinement.binds) {
      if (b.writable && confinement.drop_identity && !hand_over(b.source, confinement.uid)) {
        result.error = "cannot hand '" + b.source + "' over to the confined child: " + std::strerror(errno);
        return result;
      }
    }
    // Its home is its folder, its /tmp its own, and the CUDA driver keeps no JIT cache.
    std::erase_if(env_storage, [](const std::string& e) {
      return e.rfind("HOME=", 0) == 0 || e.rfind("TMPDIR=", 0) == 0 || e.rfind("USER=", 0) == 0;
    });
    env_storage.push_back("HOME=" + (cwd_text.empty() ? std::string("/") : cwd_text));
    env_storage.push_back("CUDA_CACHE_DISABLE=1");
    env_storage.push_back("USER=kmcts-candidate");  // its uid has no name (Python's getpass asks)
    if (confinement.mount_ns) env_storage.push_back("TMPDIR=/tmp");
  }

  Pipe out, err, status;
  if (!out.open() || !err.open() || !status.open()) {
    result.error = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ChildPlan plan;
  plan.program = program.c_str();
  plan.argv = args.data();
  plan.cwd = cwd_text.empty() ? nullptr : cwd_text.c_str();
  plan.stdin_fd = devnull, plan.stdout_fd = out.write, plan.stderr_fd = err.write, plan.status_fd = status.write;
  if (limits.memory_mb > 0) {
    rlim_t bytes = static_cast<rlim_t>(limits.memory_mb) << 20;
    plan.memory = {bytes, bytes};
    plan.limit_memory = true;
  }
  if (limits.cpu_seconds > 0) {
    auto soft = static_cast<rlim_t>(std::ceil(limits.cpu_seconds));
    plan.cpu = {soft, soft + 1};  // SIGXCPU at the soft limit, SIGKILL a second later
    plan.limit_cpu = true;
  }
  plan.parent = getpid();
  if (limits.confine) {
    plan.confinement = &confinement;
    result.confinement = confinement.description;
    plan.program_fd = ::open(program.c_str(), O_RDONLY | O_CLOEXEC);
    char magic[2] = {0, 0};
    plan.program_is_script = plan.program_fd >= 0 && ::pread(plan.program_fd, magic, 2, 0) == 2 && magic[0] == '#' && magic[1] == '!';
  }
  std::vector<char*> envp;
  for (std::string& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);
  plan.envp = envp.data();

  const auto start = Clock::now();
  pid_t pid = fork();
  if (pid == 0) run_child(plan);
  if (devnull >= 0) ::close(devnull);
  if (plan.program_fd >= 0) ::close(plan.program_fd);
  out.close_write(), err.close_write(), status.close_write();
  if (pid < 0) {
    result.error = std::string("fork: ") + std::strerror(errno);
    return result;
  }
  setpgid(pid, pid);  // also from this side: no window where a timeout kill misses the group

  // The status pipe closes on a successful exec; data on it means the exec failed.
  ChildFailure failure{};
  ssize_t got;
  do got = ::read(status.read, &failure, sizeof failure);
  while (got < 0 && errno == EINTR);
  if (got == static_cast<ssize_t>(sizeof failure)) {
    int ignored;
    waitpid(pid, &ignored, 0);
    result.error = (failure.stage == 0   ? "cannot enter '" + cwd_text + "': "
                    : failure.stage == 2 ? std::string("cannot confine the child (") + failure.step + "): "
                                         : "cannot run '" + program + "': ") +
                   std::strerror(failure.error);
    return result;
  }
  result.started = true;

  for (int fd : {out.read, err.read}) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limits.timeout_s));
  Clock::time_point drain_deadline{};
  bool out_open = true, err_open = true, child_done = false, out_cut = false, err_cut = false;
  int wait_status = 0;

  auto finish_child = [&](bool timed_out, bool over_memory = false, bool over_folder = false) {
    // A confined child's process namespace: its init, which ends only after every process in it.
    const pid_t init = confinement.pid_ns ? first_child(pid) : 0;
    // The child is still a zombie (not reaped), so its pid cannot have been reused.
    kill(-pid, SIGKILL);  // stragglers in its group (or everything, on a timeout)
    if (timed_out || over_memory || over_folder) kill(pid, SIGKILL);
    result.timed_out = timed_out;
    result.memory_exceeded = over_memory;
    result.folder_exceeded = over_folder;
    while (waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
    }
    wait_exited(init);  // killed with the group above: the namespace is gone once it has exited
    child_done = true;
    result.wall_seconds = seconds_between(start, Clock::now());
    drain_deadline = Clock::now() + std::chrono::milliseconds(static_cast<int>(kDrainSeconds * 1000));
  };

  while (out_open || err_open || !child_done) {
    if (!child_done && Clock::now() >= deadline) {
      finish_child(true);
      continue;
    }
    if (child_done && Clock::now() >= drain_deadline) break;
    pollfd fds[3];
    int count = 0, out_index = -1, err_index = -1, pid_index = -1;
    if (out_open) out_index = count, fds[count++] = {out.read, POLLIN, 0};
    if (err_open) err_index = count, fds[count++] = {err.read, POLLIN, 0};
    if (!child_done && pidfd >= 0) pid_index = count, fds[count++] = {pidfd, POLLIN, 0};
    int wait_ms = ms_until(child_done ? drain_deadline : deadline);
    if (!child_done && pidfd < 0) wait_ms = std::min(wait_ms, kFallbackTickMs);
    if (!child_done && limits.max_rss_mb > 0) {
      wait_ms = std::min(wait_ms, kRssTickMs);
      if (resident_bytes(pid, confinement.pid_ns ? 2 : 0) > (limits.max_rss_mb << 20)) {
        finish_child(false, true);
        continue;
      }
    }
    if (!child_done && !limits.watched_folder.empty()) {
      wait_ms = std::min(wait_ms, kRssTickMs);
      if (folder_over(limits.watched_folder, limits.max_folder_bytes, limits.max_folder_entries)) {
        finish_child(false, false, true);
        continue;
      }
    }
    int ready = poll(fds, static_cast<nfds_t>(count), wait_ms);
    if (ready < 0 && errno != EINTR) break;
    if (out_index >= 0 && fds[out_index].revents) out_open = drain_into(out.read, result.out, limits.max_output_bytes, out_cut);
    if (err_index >= 0 && fds[err_index].revents) err_open = drain_into(err.read, result.err, limits.max_output_bytes, err_cut);
    if (!child_done) {
      siginfo_t info{};  // WNOWAIT keeps the zombie, so the group kill stays safe
      bool exited = pid_index >= 0 ? fds[pid_index].revents != 0
                                   : waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
                                         info.si_pid == pid;
      if (exited) finish_child(false);
    }
  }
  if (!child_done) finish_child(false);  // poll failed: do not leave a zombie behind
  if (pidfd >= 0) ::close(pidfd);
  if (out_cut) result.out += "\n[output truncated]\n";
  if (err_cut) result.err += "\n[output truncated]\n";
  if (WIFEXITED(wait_status)) result.exit_code = WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) result.signal = WTERMSIG(wait_status);
  return result;
}

ConfinementPlan confinement_for(const SandboxLimits& limits, uid_t uid) {
  ConfinementPlan plan = confinement_plan(limits.build);  // the filter compiled once
  plan.uid = uid;
  plan.max_file_bytes = limits.max_file_bytes;
  plan.max_processes = limits.max_processes ? limits.max_processes : confinement_max_processes();
  plan.tmpfs_options = limits.tmpfs_options;
  if (plan.mount_ns) plan.binds = limits.binds, plan.hidden = limits.hidden;
  if (limits.shared_uid != 0 && plan.drop_identity) {
    plan.uid = limits.shared_uid;
  } else if (limits.keep_uid || limits.shared_uid != 0) {  // a shared uid this machine cannot switch to: kept, powerless
    plan.drop_identity = false, plan.drop_capabilities = true;
  }
  plan.description = describe(plan);
  return plan;
}

void hide_home(SandboxLimits& limits, const std::vector<std::filesystem::path>& needed) {
  namespace fs = std::filesystem;
  constexpr size_t kMaxBinds = 16;  // what a view takes (confine.cpp)
  std::error_code ec;
  // What the view hides: the private /tmp, /var/tmp and /dev/shm always, the home when there is one.
  std::vector<std::string> hidden_by_view = {"/tmp", "/var/tmp", "/dev/shm"};
  const char* home = std::getenv("HOME");
  if (home && *home == '/' && fs::path(home) != "/" && fs::is_directory(home, ec)) {
    const std::string h = fs::canonical(home, ec).string();
    if (!ec) {
      limits.hidden.push_back(h);
      hidden_by_view.push_back(h);
    }
  }
  for (const fs::path& folder : needed) {
    const std::string real = fs::canonical(folder, ec).string();
    if (ec || !fs::is_directory(real, ec)) continue;
    for (const std::string& h : hidden_by_view) {
      const bool inside = real.size() > h.size() && real.compare(0, h.size(), h) == 0 && real[h.size()] == '/';
      if (inside && limits.binds.size() < kMaxBinds) {
        limits.binds.push_back({real, real, false});
        break;
      }
    }
  }
}

}  // namespace kmcts
