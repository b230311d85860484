#pragma once
// Runs one child process under limits and collects what it said. Used for the compiler
// and for the CPU worker: whatever the child does (crash, hang, flood its pipes, fork),
// the caller gets a SandboxResult back and the child's whole process group is gone.
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "hardware/confine.hpp"

namespace kmcts {

struct SandboxLimits {
  double timeout_s = 60;       // wall clock; on expiry the process group gets SIGKILL
  int64_t memory_mb = 0;       // RLIMIT_AS of the child; 0 = inherit
  // Resident memory of the child, checked every 50 ms; over it, the group gets SIGKILL. For
  // children RLIMIT_AS cannot bound: a CUDA process reserves terabytes of address space.
  int64_t max_rss_mb = 0;
  double cpu_seconds = 0;      // RLIMIT_CPU (soft; SIGKILL one second later); 0 = inherit
  size_t max_output_bytes = 8u << 20;  // per stream; more is read and dropped (marked)
  /// The child runs candidate code: confined before it execs (hardware/confine.hpp). Its
  /// working folder is entered before its identity changes; what it needs beyond it must be
  /// readable by that identity, or bound into its view (binds).
  bool confine = false;
  /// Confined: file data it may write (0: none), what its view shows besides the read-only tree
  /// (writable binds are handed over to its uid first), and its private /tmp's tmpfs options.
  uint64_t max_file_bytes = 0;
  std::vector<Bind> binds;
  std::vector<std::string> hidden;  // folders it sees empty (bind what it needs from them)
  bool build = false;  // a build: it may set process groups (ninja does, for each job)
  /// Confined under kmcts's own uid, every capability dropped, instead of a uid of its own (or a
  /// user namespace's root with its capabilities): for a process tree that shares GPU memory by
  /// CUDA IPC, which fails across uids (the KernelBench harness and its candidate processes).
  bool keep_uid = false;
  /// When kmcts runs as root: the whole tree under this uid (leased by the caller, who keeps the
  /// lease while it runs) instead of kmcts's; CUDA IPC works within one uid. Wins over keep_uid.
  uid_t shared_uid = 0;
  uint64_t max_processes = 0;  // confined: RLIMIT_NPROC; 0: evaluator.max_processes
  /// A folder the child writes into, held to `max_folder_bytes` of file data and
  /// `max_folder_entries` entries (checked every 50 ms; over, the group gets SIGKILL): for
  /// a folder it must be able to write, which RLIMIT_FSIZE bounds only file by file.
  std::filesystem::path watched_folder;
  uint64_t max_folder_bytes = 0, max_folder_entries = 0;
  std::string tmpfs_options = "size=64m,mode=1777";
};

struct SandboxResult {
  bool started = false;   // false: the program could not be run at all (see error)
  std::string error;      // why it did not start
  int exit_code = -1;     // valid when the child exited (signal == 0)
  int signal = 0;         // the terminating signal, 0 if it exited
  bool timed_out = false; // killed by us at the wall-clock limit
  bool memory_exceeded = false;  // killed by us over max_rss_mb
  bool folder_exceeded = false;  // killed by us: watched_folder over its limits
  std::string out;
  std::string err;
  double wall_seconds = 0;
  std::string confinement;  // what confined the child ("" when not asked): for the evaluation's record

  bool exited_cleanly() const { return started && !timed_out && signal == 0 && exit_code == 0; }
};

/// The confinement `limits` asks for (limits.confine), as this machine supports it, for a child
/// that runs as `uid` (its lease's, or kmcts's own with keep_uid).
ConfinementPlan confinement_for(const SandboxLimits& limits, uid_t uid);

/// Runs argv[0] (searched in PATH when it has no '/') with the arguments. `cwd` empty = ours.
/// Never throws for anything the child does; throws std::invalid_argument on an empty argv.
SandboxResult run_sandboxed(const std::vector<std::string>& argv, const SandboxLimits& limits,
                            const std::filesystem::path& cwd = {});

/// Hides the user's home ($HOME, when it is a folder other than "/") from a confined child (an
/// empty folder in its view) and binds back in, read-only, each folder of `needed` the view would
/// hide: in the home, or under the private /tmp, /var/tmp and /dev/shm (a compiler's prefix,
/// include folders, a virtual environment, a source tree cloned under /tmp).
void hide_home(SandboxLimits& limits, const std::vector<std::filesystem::path>& needed);

/// The first child of `pid` (/proc/PID/task/PID/children), 0 when none or unreadable.
pid_t first_child(pid_t pid);
/// Waits, up to 5 s, until `pid` has exited (a zombie, or gone); nothing for pid <= 0. A
/// confined child's process namespace ends with its init, just after its keeper is reaped: a
/// caller that returned before might start the next job on a GPU or uid the old one still holds.
void wait_exited(pid_t pid);

/// `name` as a path: itself when it has a '/', else the first executable of that name in PATH;
/// "" when there is none.
std::string find_program(const std::string& name);

/// "SIGSEGV" for SIGSEGV, "signal 42" for signals without a name.
std::string signal_name(int signal_number);

}  // namespace kmcts
