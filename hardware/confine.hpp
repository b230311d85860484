#pragma once
// Confinement of the processes that run candidate code (the CPU and CUDA workers): set up in
// the forked child just before it execs, with the kernel's own means.
//   - no network: a network namespace of its own (only a loopback, down);
//   - its own identity: when kmcts runs as root, uid and gid 65534 (nobody), so that it can read
//     neither kmcts's /proc files (environment, memory) nor any file only root may; otherwise a
//     user namespace of its own, and kmcts itself is not dumpable (same-uid processes without
//     privileges cannot read its /proc files either);
//   - no_new_privs, no core files, no file data written anywhere (RLIMIT_FSIZE 0: a write to a
//     file kills it with SIGXFSZ; its results go through its stdout pipe);
//   - a seccomp filter (libseccomp, compiled before the fork) that refuses with EPERM what a
//     measurement never needs: ptrace and process_vm_*, mount and namespaces, bpf, keyrings,
//     modules, kexec, setsid and setpgid (a daemon cannot leave the process group the sandbox
//     kills), and the like.
// What the kernel refuses (some containers forbid namespaces) is probed once; kmcts says so
// once, confines with the rest, and records in every evaluation which confinement held.
// Not confined yet (issue 28): the file system (a candidate can create empty files where nobody
// may), the KernelBench harness and its candidate processes, and compiler runs.
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
  bool seccomp = false;      // the filter compiled and loaded
  std::string refused;       // what could not be applied, and why ("" when everything)
  /// "network namespace, uid nobody, no_new_privs, rlimits, seccomp" (what holds).
  std::string summary() const;
};
const ConfinementSupport& confinement_support();

/// Everything the forked child needs, prepared before the fork (the child may only make
/// async-signal-safe calls).
struct ConfinementPlan {
  bool user_ns = false;
  bool net_ns = false;
  bool drop_to_nobody = false;
  bool seccomp = false;
  char uid_map[48] = {0}, gid_map[48] = {0};  // "0 UID 1" for a user namespace
  std::vector<sock_filter> filter;
  std::string description;  // what it applies, for the evaluation's record
};
/// The plan of every confinement this machine supports.
ConfinementPlan confinement_plan();

/// In the forked child, before chdir and exec: applies the plan but its seccomp filter. Returns
/// 0, or the errno of the step that failed with *step naming it (a static string).
int apply_confinement(const ConfinementPlan& plan, const char** step);
/// The last step, just before exec: loads the seccomp filter (0 or an errno).
int load_seccomp(const ConfinementPlan& plan);

/// Whether workers are confined (evaluator.confine; on by default). Off only to measure what
/// confinement costs, or where it breaks a toolchain.
void set_confinement_enabled(bool enabled);
bool confinement_enabled();

/// Makes this process (kmcts) not dumpable, so that processes of the same uid without privileges
/// cannot read its /proc files (environment, memory). Called once at start.
void protect_this_process();

}  // namespace kmcts
