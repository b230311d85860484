/* The guard a KernelBench candidate's process takes before it imports torch (candidate_worker.py
   loads it with ctypes): the trusted harness shares its uid and its view (CUDA IPC needs one uid),
   so the process confines itself.
   - Landlock (hardware/worker/landlock.hpp): writes only beneath `writable` (its scratch, the folder its
     extensions are staged in, /dev/shm) and, to existing files, beneath `write_files` (/dev's
     device nodes, its own /proc/self, which the CUDA driver writes as it starts); from ABI 6,
     signals only to what it starts itself.
   - PR_SET_CHILD_SUBREAPER: whatever it starts stays its descendant even when it daemonises, so
     the harness finds and stops it with it.
   - seccomp: no setsid, no clone with CLONE_PARENT (clone3: ENOSYS); the subreaper cannot be
     given up; below Landlock ABI 3 no truncate(2); where Landlock cannot scope signals (below
     ABI 6), none to `parent` (the harness), its process group or every process (-1), no pidfd
     signals and no F_SETOWN/F_SETSIG. That stand-in is partial: the harness's other processes
     (the reference's timing process, spares) are not named, and it is untested (our kernels
     have ABI 7).
   Call it while the process has one thread. Returns 0 when the filter holds (Landlock may not:
   the report says what held), -1 otherwise; `report` gets one line either way. */
#ifndef KMCTS_KB_GUARD_H
#define KMCTS_KB_GUARD_H
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* writable, write_files: paths separated by newlines. */
int kmcts_kb_guard(const char* writable, const char* write_files, int parent, char* report, size_t report_len);

#ifdef __cplusplus
}
#endif
#endif
