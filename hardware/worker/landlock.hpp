#pragma once
// Landlock (Linux 5.13+): a process restricts itself, without privileges, to writing (and, if
// asked, reading) only beneath named folders; from ABI 6 (Linux 6.12) it may also signal only
// processes of its own domain (itself and what it starts after). Used where candidate code runs
// beside trusted code or the user's files: the KernelBench candidate's process
// (kernelbench/guard/), which CUDA IPC keeps under the harness's uid, and the kernel hosts of
// both workers (host_serve.hpp), which read only the system's folders and their kernel. What
// holds is said, never assumed: the report names the ABI and each part that held.
#include <string>
#include <vector>

namespace kmcts {

struct LandlockRules {
  std::vector<std::string> writable;     ///< beneath each: every write (files, folders, links, removal)
  std::vector<std::string> write_files;  ///< beneath each: opening existing files to write (device nodes)
  bool scope_signals = true;             ///< signals only within the domain (ABI 6+)
  /// When set, reads too are confined: files are read (or executed), and folders listed, only
  /// beneath `readable` and the two lists above.
  bool restrict_reads = false;
  std::vector<std::string> readable;
};

struct LandlockReport {
  int abi = 0;                  ///< 0: the kernel has no Landlock (or it is disabled)
  bool writes_confined = false;
  bool reads_confined = false;
  bool signals_scoped = false;
  std::string error;            ///< why a part did not hold ("" when all asked for did)
  std::string summary() const;  ///< e.g. "landlock ABI 7: writes only beneath its folders, signals within its domain"
};

/// The running kernel's Landlock ABI version, 0 when unavailable.
int landlock_abi();

/// Restricts the calling thread and every thread or process it starts afterwards (call it while
/// the process has a single thread). A folder that does not exist (or may not be opened) is skipped; the rules take
/// effect only as a whole (nothing is restricted when adding one fails). Needs no_new_privs,
/// which it sets.
LandlockReport restrict_with_landlock(const LandlockRules& rules);

}  // namespace kmcts
