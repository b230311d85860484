#include "hardware/confine.hpp"

#include <fcntl.h>
#include <poll.h>
#include <grp.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <signal.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <mutex>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/options.hpp"

KMCTS_OPTION("evaluator.confine_view", Bool, true, std::nullopt, std::nullopt,
             "Give confined processes a view of their own (mount namespace: read-only tree, private /tmp, the user's "
             "home hidden from builds). Off only where it breaks a toolchain; the rest of evaluator.confine holds")
KMCTS_OPTION("evaluator.max_processes", Int, 2048, 16, 1 << 22,
             "Processes and threads a confined candidate's uid may have at once (RLIMIT_NPROC): a fork bomb fails "
             "there. Binds a uid of its own (kmcts as root) and a user namespace's; the kernel exempts root's own uid "
             "(the KernelBench harness under root), whose processes still end with the harness")
KMCTS_OPTION("evaluator.confine", Bool, true, std::nullopt, std::nullopt,
             "Confine the processes that run candidate code (own network namespace, uid nobody or a user namespace, "
             "no_new_privs, no file writes, a seccomp filter; see README, Security). Turn off only to measure what it "
             "costs, or where it breaks a toolchain")

namespace kmcts {
namespace {

constexpr uid_t kNobody = 65534;
std::atomic<bool> g_confine{true};
std::atomic<bool> g_view{true};  // evaluator.confine_view, read at the first confined child
std::atomic<uint64_t> g_max_processes{2048};  // evaluator.max_processes

// What a measurement never needs: refused with EPERM (names this libseccomp does not know on
// this architecture are skipped).
constexpr const char* kDenied[] = {
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd", "mount", "umount2", "pivot_root",
    "chroot", "move_mount", "open_tree", "fsopen", "fsmount", "fsconfig", "fspick", "mount_setattr", "unshare",
    "setns", "bpf", "keyctl", "add_key", "request_key", "kexec_load", "kexec_file_load", "init_module",
    "finit_module", "delete_module", "reboot", "swapon", "swapoff", "acct", "settimeofday", "clock_settime",
    "clock_adjtime", "adjtimex", "syslog", "quotactl", "open_by_handle_at", "name_to_handle_at", "iopl", "ioperm",
    "userfaultfd", "setsid", "setpgid", "personality", "vhangup", "lookup_dcookie",
};

// The filter as BPF, compiled by libseccomp now (the child only loads it). A build may set
// process groups (ninja puts each of its jobs in one of its own).
std::vector<sock_filter> compile_filter(std::string& error, bool build = false) {
  std::vector<sock_filter> out;
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) {
    error = "seccomp_init failed";
    return out;
  }
  for (const char* name : kDenied) {
    if (build && std::strcmp(name, "setpgid") == 0) continue;
    const int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) continue;
    if (int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0); rc < 0) {
      error = fmt::format("seccomp rule for {}: {}", name, std::strerror(-rc));
      seccomp_release(ctx);
      return out;
    }
  }
  const int fd = memfd_create("kmcts-seccomp", MFD_CLOEXEC);
  if (fd < 0 || seccomp_export_bpf(ctx, fd) < 0) {
    error = "cannot export the seccomp filter";
  } else {
    const off_t size = lseek(fd, 0, SEEK_END);
    out.resize(static_cast<size_t>(size) / sizeof(sock_filter));
    if (pread(fd, out.data(), out.size() * sizeof(sock_filter), 0) != static_cast<ssize_t>(out.size() * sizeof(sock_filter)))
      out.clear(), error = "cannot read the seccomp filter back";
  }
  if (fd >= 0) close(fd);
  seccomp_release(ctx);
  return out;
}

bool write_file(const char* path, const char* text) {
  const int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const size_t n = strlen(text);
  const bool ok = write(fd, text, n) == static_cast<ssize_t>(n);
  close(fd);
  return ok;
}

// Makes `path` and the folders above it (on the private tmpfs, say), or, with `file`, an empty file
// there. Async-signal-safe: no allocation.
int make_path(const char* path, bool file) {
  char buffer[4096];
  const size_t n = strlen(path);
  if (n == 0 || n >= sizeof buffer || path[0] != '/') return ENAMETOOLONG;
  memcpy(buffer, path, n + 1);
  for (size_t i = 1; i <= n; ++i) {
    if (buffer[i] != '/' && buffer[i] != '\0') continue;
    const char saved = buffer[i];
    buffer[i] = '\0';
    struct stat st;
    if (stat(buffer, &st) != 0) {
      if (i == n && file) {
        const int fd = open(buffer, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0) return errno;
        close(fd);
      } else if (mkdir(buffer, 0755) != 0) {
        return errno;
      }
    }
    buffer[i] = saved;
  }
  return 0;
}

// The child's own view (in its own mount namespace): everything read-only, a fresh tmpfs on
// /tmp, /var/tmp and /dev/shm, then the plan's binds. The binds are cloned from the real tree
// before the tmpfs could hide their sources, and placed after.
int make_own_view(const ConfinementPlan& plan, const char** step) {
  *step = "mount namespace";
  if (unshare(CLONE_NEWNS) != 0) return errno;
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return errno;
  *step = "read-only file system";
  mount_attr read_only{};
  read_only.attr_set = MOUNT_ATTR_RDONLY;
  if (mount_setattr(AT_FDCWD, "/", AT_RECURSIVE, &read_only, sizeof read_only) != 0) return errno;
  // /proc stays writable: the CUDA driver cannot make a context where it is read-only (measured
  // on the H200: "OS call failed"), and what a process may write there is its own. In a process
  // namespace it is a new one, which shows only that namespace's processes.
  if (plan.own_proc) {
    *step = "own /proc";
    if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) return errno;
  } else {
    mount_attr writable{};
    writable.attr_clr = MOUNT_ATTR_RDONLY;
    struct stat proc, root;
    // Only where /proc is a mount of its own: otherwise the call would make the root writable.
    if (stat("/proc", &proc) == 0 && stat("/", &root) == 0 && proc.st_dev != root.st_dev &&
        mount_setattr(AT_FDCWD, "/proc", 0, &writable, sizeof writable) != 0)
      return errno;
  }
  // What a process of uid 0 without capabilities (the KernelBench harness under a root kmcts)
  // could still write in /proc: kernel settings (core_pattern would run a command as root) and
  // triggers. Read-only, as container runtimes leave them.
  *step = "read-only /proc/sys";
  for (const char* path : {"/proc/sys", "/proc/sysrq-trigger", "/proc/bus", "/proc/fs", "/proc/irq"}) {
    struct stat st;
    if (stat(path, &st) != 0) continue;
    const int tree = open_tree(AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
    if (tree < 0) return errno;
    mount_attr attr{};
    attr.attr_set = MOUNT_ATTR_RDONLY;
    const bool ok = mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) == 0 &&
                    move_mount(tree, "", AT_FDCWD, path, MOVE_MOUNT_F_EMPTY_PATH) == 0;
    const int err = errno;
    close(tree);
    if (!ok) return err;
  }
  constexpr size_t kMaxBinds = 16;
  int trees[kMaxBinds];
  bool files[kMaxBinds];
  const size_t count = plan.binds.size();
  *step = "binds";
  if (count > kMaxBinds) return E2BIG;
  for (size_t i = 0; i < count; ++i) {
    const Bind& b = plan.binds[i];
    struct stat st;
    if (stat(b.source.c_str(), &st) != 0) return errno;
    files[i] = !S_ISDIR(st.st_mode);
    trees[i] = open_tree(AT_FDCWD, b.source.c_str(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
    if (trees[i] < 0) return errno;
    mount_attr attr{};
    (b.writable ? attr.attr_clr : attr.attr_set) = MOUNT_ATTR_RDONLY;
    if (mount_setattr(trees[i], "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) != 0) return errno;
  }
  *step = "private /tmp";
  for (const char* dir : {"/tmp", "/var/tmp", "/dev/shm"}) {
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    if (mount("kmcts-private", dir, "tmpfs", MS_NOSUID | MS_NODEV, plan.tmpfs_options.c_str()) != 0) return errno;
  }
  // /run holds the host's services' sockets (docker, systemd, D-Bus): a child under kmcts's uid
  // (the KernelBench harness: uid 0 without capabilities under a root kmcts) could connect to
  // a root-only one, as the file system being read-only does not stop a connect. It sees /run
  // empty but for the NVIDIA driver's daemons' folders, bound back as they are.
  *step = "hidden /run";
  constexpr const char* kRunKept[] = {"/run/nvidia-persistenced", "/run/nvidia-fabricmanager", "/run/nvidia-mps"};
  int kept[std::size(kRunKept)];
  for (size_t i = 0; i < std::size(kRunKept); ++i) {
    struct stat st;
    kept[i] = stat(kRunKept[i], &st) == 0 ? open_tree(AT_FDCWD, kRunKept[i], OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE) : -1;
  }
  for (const char* dir : {"/run", "/var/run"}) {
    struct stat st;
    if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) continue;  // /var/run is mostly a link to /run
    if (mount("kmcts-hidden", dir, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755") != 0) return errno;
  }
  for (size_t i = 0; i < std::size(kRunKept); ++i) {
    if (kept[i] < 0) continue;
    if (int err = make_path(kRunKept[i], false); err != 0) return err;
    if (move_mount(kept[i], "", AT_FDCWD, kRunKept[i], MOVE_MOUNT_F_EMPTY_PATH) != 0) return errno;
    close(kept[i]);
  }
  *step = "hidden folders";
  for (const std::string& dir : plan.hidden) {
    struct stat st;
    if (stat(dir.c_str(), &st) != 0) continue;  // under the private /tmp: empty already
    if (mount("kmcts-hidden", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "size=16m,mode=0755") != 0) return errno;
  }
  *step = "binds";
  for (size_t i = 0; i < count; ++i) {
    if (int err = make_path(plan.binds[i].target.c_str(), files[i]); err != 0) return err;
    if (move_mount(trees[i], "", AT_FDCWD, plan.binds[i].target.c_str(), MOVE_MOUNT_F_EMPTY_PATH) != 0) return errno;
    close(trees[i]);
  }
  // The folder it was started in, entered again by its path: where a bind now covers it, the
  // bind (writable, say) is where it works, not the read-only mount below. Where nothing covers
  // it (or a hidden folder did), it stays where it was.
  char cwd[4096];
  if (getcwd(cwd, sizeof cwd) != nullptr) {
    const int here = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (chdir(cwd) != 0 && here >= 0) fchdir(here);
    if (here >= 0) close(here);
  }
  return 0;
}

// Closes every descriptor but `keep`. Async-signal-safe.
void close_all_but(int keep) {
#ifdef SYS_close_range
  const bool low = keep == 0 || syscall(SYS_close_range, 0u, static_cast<unsigned>(keep - 1), 0u) == 0;
  if (low && syscall(SYS_close_range, static_cast<unsigned>(keep + 1), ~0u, 0u) == 0) return;
#endif
  for (int fd = 0; fd < 65536; ++fd)
    if (fd != keep) close(fd);
}

// Ends this process as a wait status says its program ended: the same exit code, or killed by
// the same signal (no core file). Async-signal-safe.
[[noreturn]] void end_as(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const rlimit none{0, 0};
    setrlimit(RLIMIT_CORE, &none);
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    sigaction(sig, &default_action, nullptr);
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, sig);
    sigprocmask(SIG_UNBLOCK, &only, nullptr);
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);  // no core_pattern helper runs for the re-raised signal
    kill(getpid(), sig);
    _exit(128 + sig);
  }
  _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 127);
}

// A process namespace for what this process execs next. This process stays outside as the
// keeper; its child is the namespace's init (pid 1), which forks the program's process (pid 2)
// and reaps whatever the namespace leaves to it; the program's wait status goes back to the
// keeper through a pipe, and the keeper ends as the program did. Returns in the program's
// process (0), or an errno in the caller's when the namespace cannot be made. Async-signal-safe.
int enter_process_namespace() {
  if (unshare(CLONE_NEWPID) != 0) return errno;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return errno;
  const pid_t init = _Fork();  // not fork(): no atfork handlers in a child of a threaded process
  if (init < 0) {
    const int err = errno;
    close(fds[0]), close(fds[1]);
    return err;
  }
  if (init > 0) {  // the keeper: holds nothing of the program's (its pipes would stay open)
    prctl(PR_SET_NAME, "kmcts-keeper", 0, 0, 0);
    close_all_but(fds[0]);
    int status = 0;
    while (waitpid(init, &status, 0) < 0 && errno == EINTR) {
    }
    int program_status = 0;
    if (read(fds[0], &program_status, sizeof program_status) == static_cast<ssize_t>(sizeof program_status))
      status = program_status;
    end_as(status);
  }
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // the keeper killed: the namespace goes with its init
  // A keeper that died before that has closed the pipe's last read end: a write end then polls
  // POLLERR, and init ends at once instead of running unwatched.
  close(fds[0]);
  pollfd keeper{fds[1], 0, 0};
  if (poll(&keeper, 1, 0) > 0 && (keeper.revents & POLLERR)) _exit(127);
  const pid_t program = _Fork();
  if (program < 0) _exit(127);
  if (program > 0) {  // init: reaps everything, until the program ends; no signal from inside reaches it
    prctl(PR_SET_NAME, "kmcts-ns-init", 0, 0, 0);
    close_all_but(fds[1]);
    for (;;) {
      int status = 0;
      const pid_t ended = waitpid(-1, &status, 0);
      if (ended == program) {
        ssize_t ignored = write(fds[1], &status, sizeof status);
        (void)ignored;
        _exit(0);  // the kernel kills what is left in the namespace
      }
      if (ended < 0 && errno != EINTR) _exit(127);
    }
  }
  close(fds[1]);
  // Its own session: no process group or terminal shared with kmcts (kill(0, ...) reaches no one
  // outside; no /dev/tty to inject input into). The keeper and init stay in kmcts's group, so a
  // group kill still ends the namespace.
  if (setsid() < 0) return errno;
  return 0;
}

// Probes one plan in a forked child: 0 when it applied whole, else the errno (and the step).
std::pair<int, std::string> probe(const ConfinementPlan& plan) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return {errno, "pipe"};
  const pid_t pid = fork();
  struct Report {
    int error;
    const char* step;  // a static string: the same address in the parent (a forked copy)
  };
  if (pid == 0) {  // async-signal-safe calls only: the parent may have other threads
    close(fds[0]);
    Report report{0, ""};
    report.error = apply_confinement(plan, &report.step);
    if (report.error == 0 && plan.seccomp) report.error = load_seccomp(plan), report.step = "seccomp";
    ssize_t ignored = write(fds[1], &report, sizeof report);
    (void)ignored;
    _exit(0);
  }
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    return {errno, "fork"};
  }
  Report report{EIO, "the probe died"};
  const ssize_t got = read(fds[0], &report, sizeof report);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (got != static_cast<ssize_t>(sizeof report)) return {EIO, "the probe died"};
  return {report.error, report.step};
}

}  // namespace

namespace {
std::string describe_parts(bool net_ns, bool root, const std::string& uid, bool user_ns, bool mount_ns, bool seccomp,
                           bool no_capabilities, bool pid_ns, bool own_proc) {
  std::vector<std::string> parts;
  if (net_ns) parts.push_back("network namespace");
  if (pid_ns) parts.push_back(own_proc ? "process namespace with its own /proc" : "process namespace");
  if (root) parts.push_back(uid);
  if (no_capabilities) parts.push_back("no capabilities");
  if (user_ns) parts.push_back("user namespace");
  if (mount_ns) parts.push_back("read-only file system, private /tmp");
  parts.push_back("no_new_privs");
  parts.push_back("rlimits");
  if (seccomp) parts.push_back("seccomp");
  return fmt::format("{}", fmt::join(parts, ", "));
}
}  // namespace

std::string ConfinementSupport::summary() const {
  return describe_parts(net_ns, root, "own uid", user_ns, mount_ns, seccomp, false, pid_ns, own_proc);
}

std::string describe(const ConfinementPlan& p) {
  return describe_parts(p.net_ns, p.drop_identity, fmt::format("uid {}", p.uid), p.user_ns, p.mount_ns, p.seccomp,
                        p.drop_capabilities && !p.drop_identity, p.pid_ns, p.own_proc);
}

const ConfinementPlan& confinement_plan(bool build) {
  static const auto make = [](bool for_build) {
    const ConfinementSupport& s = confinement_support();
    ConfinementPlan p;
    p.drop_identity = s.root;
    p.user_ns = s.user_ns;
    p.net_ns = s.net_ns;
    p.mount_ns = s.mount_ns;
    std::string error;
    if (s.seccomp) p.filter = compile_filter(error, for_build);
    p.seccomp = s.seccomp && !p.filter.empty();
    p.mount_ns = p.mount_ns && g_view.load();
    p.pid_ns = s.pid_ns;
    p.own_proc = s.own_proc && p.mount_ns;
    std::snprintf(p.uid_map, sizeof p.uid_map, "0 %u 1", static_cast<unsigned>(geteuid()));
    std::snprintf(p.gid_map, sizeof p.gid_map, "0 %u 1", static_cast<unsigned>(getegid()));
    p.description = describe(p);
    return p;
  };
  static const ConfinementPlan candidate = make(false), builds = make(true);
  return build ? builds : candidate;
}

namespace {
constexpr uid_t kUidBase = 2000000000;
constexpr int kUidsPerProcess = 256;
std::mutex g_uid_mutex;
bool g_uid_taken[kUidsPerProcess] = {};  // guarded by g_uid_mutex
}  // namespace

UidLease::UidLease() : uid_(geteuid()) {
  if (uid_ != 0) return;
  std::lock_guard lock(g_uid_mutex);
  for (int i = 0; i < kUidsPerProcess; ++i) {
    if (!g_uid_taken[i]) {
      g_uid_taken[i] = true;
      slot_ = i;
      uid_ = kUidBase + static_cast<uid_t>(kUidsPerProcess) * static_cast<uid_t>(getpid() % 4096) + static_cast<uid_t>(i);
      return;
    }
  }
  uid_ = kNobody;
}

UidLease::~UidLease() {
  if (slot_ < 0) return;
  std::lock_guard lock(g_uid_mutex);
  g_uid_taken[slot_] = false;
}

bool hand_over(const std::string& path, uid_t uid) {
  if (geteuid() != 0) return true;
  namespace fs = std::filesystem;
  std::error_code ec;
  if (lchown(path.c_str(), uid, uid) != 0) return false;
  if (!fs::is_directory(path, ec)) return true;
  for (auto it = fs::recursive_directory_iterator(path, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (lchown(it->path().c_str(), uid, uid) != 0) return false;
  return !ec;
}

const ConfinementSupport& confinement_support() {
  static ConfinementSupport support;
  static std::once_flag once;
  std::call_once(once, [] {
    support.root = geteuid() == 0;
    std::vector<std::string> refused;
    ConfinementPlan p;
    std::snprintf(p.uid_map, sizeof p.uid_map, "0 %u 1", static_cast<unsigned>(geteuid()));
    std::snprintf(p.gid_map, sizeof p.gid_map, "0 %u 1", static_cast<unsigned>(getegid()));
    if (support.root) {
      p.drop_identity = true;
      p.uid = kUidBase;
      if (auto [err, step] = probe(p); err != 0) {
        support.root = false;  // cannot drop: confine as a user namespace would
        refused.push_back(fmt::format("own uid ({}: {})", step, std::strerror(err)));
        p.drop_identity = false;
      }
    }
    if (!support.root) {
      p.user_ns = true;
      if (auto [err, step] = probe(p); err == 0) support.user_ns = true;
      else refused.push_back(fmt::format("user namespace ({}: {})", step, std::strerror(err))), p.user_ns = false;
    }
    // A network namespace needs root, or a user namespace first.
    ConfinementPlan net = p;
    net.net_ns = true;
    if (auto [err, step] = probe(net); err == 0) support.net_ns = true, p = net;
    else refused.push_back(fmt::format("network namespace ({}: {})", step, std::strerror(err)));
    ConfinementPlan mounts = p;
    mounts.mount_ns = true;
    if (auto [err, step] = probe(mounts); err == 0) support.mount_ns = true, p = mounts;
    else refused.push_back(fmt::format("mount namespace ({}: {})", step, std::strerror(err)));
    ConfinementPlan pids = p;
    pids.pid_ns = true;
    pids.own_proc = p.mount_ns;
    auto [pid_err, pid_step] = probe(pids);
    if (pid_err != 0 && pids.own_proc) {  // a container may refuse a new /proc: the namespace alone
      refused.push_back(fmt::format("own /proc ({}: {})", pid_step, std::strerror(pid_err)));
      pids.own_proc = false;
      std::tie(pid_err, pid_step) = probe(pids);
    }
    if (pid_err == 0) support.pid_ns = true, support.own_proc = pids.own_proc, p = pids;
    else refused.push_back(fmt::format("process namespace ({}: {})", pid_step, std::strerror(pid_err)));
    std::string error;
    p.filter = compile_filter(error);
    if (p.filter.empty()) {
      refused.push_back("seccomp (" + error + ")");
    } else {
      p.seccomp = true;
      if (auto [err, step] = probe(p); err == 0) support.seccomp = true;
      else refused.push_back(fmt::format("seccomp ({}: {})", step, std::strerror(err)));
    }
    support.refused = fmt::format("{}", fmt::join(refused, "; "));
  });
  return support;
}

int apply_confinement(const ConfinementPlan& plan, const char** step) {
  if (plan.user_ns) {
    *step = "user namespace";
    if (unshare(CLONE_NEWUSER) != 0) return errno;
    // A process may map only its own ids into its new namespace, and only with setgroups off.
    // The files are its owner's only while it is dumpable: a child of kmcts, which is not
    // (protect_this_process), is made so for the writes and not after (it was refused with
    // EACCES, and every confined child of a non-root kmcts went without namespaces).
    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
    const bool mapped = write_file("/proc/self/setgroups", "deny") && write_file("/proc/self/gid_map", plan.gid_map) &&
                        write_file("/proc/self/uid_map", plan.uid_map);
    const int err = errno;
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    if (!mapped) return err ? err : EPERM;
  }
  if (plan.pid_ns) {
    *step = "process namespace";
    if (int err = enter_process_namespace(); err != 0) return err;
  }
  if (plan.net_ns) {
    *step = "network namespace";
    if (unshare(CLONE_NEWNET) != 0) return errno;
  }
  if (plan.mount_ns) {
    if (int err = make_own_view(plan, step); err != 0) return err;
  }
  *step = "rlimits";
  const rlimit none{0, 0};
  const rlimit file_bytes{plan.max_file_bytes, plan.max_file_bytes};
  if (setrlimit(RLIMIT_CORE, &none) != 0 || setrlimit(RLIMIT_FSIZE, &file_bytes) != 0) return errno;
  const rlimit processes{plan.max_processes, plan.max_processes};
  if (plan.max_processes > 0 && setrlimit(RLIMIT_NPROC, &processes) != 0) return errno;
  *step = "no_new_privs";
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
  if (plan.drop_identity) {
    *step = "own uid";
    if (setgroups(0, nullptr) != 0 || setresgid(plan.uid, plan.uid, plan.uid) != 0 ||
        setresuid(plan.uid, plan.uid, plan.uid) != 0)
      return errno;
  }
  if (plan.drop_capabilities) {
    *step = "capabilities";
    // The bounding set first (it needs CAP_SETPCAP): an exec by uid 0 then gains nothing back.
    for (int cap = 0; cap < 64; ++cap)
      if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) return errno;
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) return errno;
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct none[_LINUX_CAPABILITY_U32S_3] = {};
    if (syscall(SYS_capset, &header, none) != 0) return errno;
  }
  return 0;
}

int load_seccomp(const ConfinementPlan& plan) {
  if (!plan.seccomp) return 0;
  sock_fprog program{static_cast<unsigned short>(plan.filter.size()), const_cast<sock_filter*>(plan.filter.data())};
  return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program, 0, 0) == 0 ? 0 : errno;
}

void set_confinement_enabled(bool enabled) { g_confine.store(enabled); }
void set_confinement_view(bool enabled) { g_view.store(enabled); }
void set_confinement_max_processes(uint64_t count) { g_max_processes.store(count); }
uint64_t confinement_max_processes() { return g_max_processes.load(); }
bool confinement_enabled() { return g_confine.load(); }

void protect_this_process() { prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }

}  // namespace kmcts
