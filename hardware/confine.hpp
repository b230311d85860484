#pragma once
// Confinement of the processes that run candidate code (the CPU and CUDA workers, the KernelBench
// prebuild): set up in the forked child just before it execs, with the kernel's own means.
//   - no network: a network namespace of its own (only a loopback, down);
//   - no one to signal: a process namespace of its own, with its own /proc where a view is made.
//     The child that kmcts forked stays outside it as a keeper: it waits for the namespace's
//     init, which reaps and waits for the program, and ends as the program ended (exit status or
//     signal), so callers see the program's status under the pid they forked. When the program
//     ends, or the keeper is killed, the kernel kills everything left in the namespace. Without it
//     a candidate under kmcts's uid (the KernelBench harness's, a user namespace's) could kill
//     kmcts, or, as root, every root process of the host (kill(-1, SIGKILL));
//   - its own identity: when kmcts runs as root, a uid and gid of its own (UidLease: no two
//     children that run at once share one), so that it can read neither kmcts's /proc files
//     (environment, memory) nor a sibling's, nor any file only root may; otherwise a user
//     namespace of its own, and kmcts itself is not dumpable;
//   - its own view of the file system (a mount namespace): everything read-only (/proc writable
//     for the CUDA driver, but /proc/sys and the kernel's triggers not), /run empty but for the
//     NVIDIA daemons' folders (no host service's socket to connect to), a fresh private
//     tmpfs on /tmp, /var/tmp and /dev/shm and on any folder its caller hides (the user's home),
//     and only the binds its caller names (a build's own cache folder, say) writable; device nodes stay usable (a read-only mount does not stop
//     writes to a device);
//   - no_new_privs, no core files, a limit on file data (RLIMIT_FSIZE: 0 for the workers, which
//     write nothing; a write over it fails with EFBIG) and on processes and threads (RLIMIT_NPROC,
//     counted per uid: it binds a uid of its own and a user namespace's, not root's own uid,
//     which the kernel exempts; the process namespace still ends them all with the program);
//   - a seccomp filter (libseccomp, compiled once, before any fork) that refuses with EPERM what a
//     measurement never needs: ptrace and process_vm_*, mount and namespaces, bpf, keyrings,
//     modules, kexec, setsid and setpgid (a daemon cannot leave the process group the sandbox
//     kills), and the like.
// What the kernel refuses (some containers forbid namespaces) is probed once; kmcts says so
// once, confines with the rest, and records in every evaluation which confinement held.
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include <linux/filter.h>

namespace kmcts {

/// What this machine lets kmcts apply, probed once in a forked child.
struct ConfinementSupport {
  bool root = false;         // kmcts runs as root: the child drops to nobody
  bool user_ns = false;      // not root: a user namespace could be made
  bool net_ns = false;       // a network namespace could be made
  bool mount_ns = false;     // a mount namespace, read-only with a private /tmp, could be made
  bool pid_ns = false;       // a process namespace could be made
  bool own_proc = false;     // and, in a mount namespace, a /proc of its own mounted
  bool seccomp = false;      // the filter compiled and loaded
  std::string refused;       // what could not be applied, and why ("" when everything)
  /// "network namespace, own uid, read-only file system, private /tmp, no_new_privs, rlimits,
  /// seccomp" (what holds).
  std::string summary() const;
};
const ConfinementSupport& confinement_support();

/// A folder or file of the real file system shown in a confined child's view at `target` (which
/// may lie in its private /tmp: it is made there). Writable only where `writable` says so, and
/// then only for an identity that may write it (the caller hands it over first).
struct Bind {
  std::string source, target;
  bool writable = false;
};

/// Everything the forked child needs, prepared before the fork (the child may only make
/// async-signal-safe calls).
struct ConfinementPlan {
  bool user_ns = false;
  bool net_ns = false;
  bool mount_ns = false;
  bool pid_ns = false;    // a process namespace (see above: keeper, init, program)
  bool own_proc = false;  // pid_ns and mount_ns: a /proc that shows only its namespace
  bool drop_identity = false;  // root: setresuid/setresgid to `uid`
  // Every capability dropped (bounding, ambient, effective, permitted, inheritable), the uid
  // kept: for a process tree that shares GPU memory by CUDA IPC, which fails across uids
  // (measured on the H200); run under kmcts's uid but without privileges, it can read neither
  // kmcts's /proc files nor those of any other privileged or non-dumpable process.
  bool drop_capabilities = false;
  bool seccomp = false;
  uid_t uid = 65534;
  uint64_t max_file_bytes = 0;  // RLIMIT_FSIZE; 0: no file data at all
  uint64_t max_processes = 0;   // RLIMIT_NPROC (processes and threads of its uid); 0: not set
  std::string tmpfs_options = "size=64m,mode=1777";  // the private /tmp, /var/tmp, /dev/shm
  std::vector<Bind> binds;  // mount_ns only
  std::vector<std::string> hidden;  // mount_ns only: folders replaced by an empty tmpfs (a home)
  char uid_map[48] = {0}, gid_map[48] = {0};  // "0 UID 1" for a user namespace
  std::vector<sock_filter> filter;
  std::string description;  // what it applies, for the evaluation's record
};
/// The plan of every confinement this machine supports (its seccomp filter compiled once); a
/// build's (`build`) may set process groups, as ninja does for each job.
const ConfinementPlan& confinement_plan(bool build = false);

/// A uid (and gid of the same number) for one confined child, when kmcts runs as root: each
/// lease alive at once has its own, from a block picked by this process's pid (2000000000 +
/// 256 * (pid % 4096) onwards), so that concurrent children, and those of other kmcts processes
/// on the host, cannot read or signal each other. Not root: the caller's own uid (a user
/// namespace maps it). The block used up: 65534, nobody.
class UidLease {
 public:
  UidLease();
  ~UidLease();
  UidLease(const UidLease&) = delete;
  UidLease& operator=(const UidLease&) = delete;
  uid_t uid() const { return uid_; }

 private:
  uid_t uid_;
  int slot_ = -1;
};

/// Hands `path` (and, for a folder, what it holds) to `uid` when kmcts runs as root, so that a
/// confined child may write it; nothing otherwise. False when it cannot.
bool hand_over(const std::string& path, uid_t uid);

/// In the forked child, before chdir and exec: applies the plan but its seccomp filter. Returns
/// 0, or the errno of the step that failed with *step naming it (a static string).
int apply_confinement(const ConfinementPlan& plan, const char** step);
/// What a plan applies, for the evaluation's record ("network namespace, uid 2000001234, ...").
std::string describe(const ConfinementPlan& plan);
/// The last step, just before exec: loads the seccomp filter (0 or an errno).
int load_seccomp(const ConfinementPlan& plan);

/// Whether workers are confined (evaluator.confine; on by default). Off only to measure what
/// confinement costs, or where it breaks a toolchain.
void set_confinement_enabled(bool enabled);
/// Whether they get a view of their own (evaluator.confine_view; on by default); set before the
/// first confined child.
void set_confinement_view(bool enabled);
/// RLIMIT_NPROC of confined children (evaluator.max_processes) where their limits name none.
void set_confinement_max_processes(uint64_t count);
uint64_t confinement_max_processes();
bool confinement_enabled();

/// Makes this process (kmcts) not dumpable, so that processes of the same uid without privileges
/// cannot read its /proc files (environment, memory). Called once at start.
void protect_this_process();

}  // namespace kmcts
