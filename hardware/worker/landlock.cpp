#include "hardware/worker/landlock.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace kmcts {
namespace {

// The kernel's ABI (linux/landlock.h), written out so that an older header does not hide a
// newer kernel's parts. Unused trailing fields stay zero, which every ABI accepts.
struct RulesetAttr {
  uint64_t handled_access_fs = 0;
  uint64_t handled_access_net = 0;
  uint64_t scoped = 0;
};
struct __attribute__((packed)) PathBeneath {
  uint64_t allowed_access = 0;
  int32_t parent_fd = -1;
};
constexpr uint32_t kCreateRulesetVersion = 1u << 0;
constexpr int kRulePathBeneath = 1;
constexpr uint64_t kExecute = 1ull << 0, kWriteFile = 1ull << 1, kReadFile = 1ull << 2, kReadDir = 1ull << 3;
constexpr uint64_t kReadRights = kExecute | kReadFile | kReadDir;
constexpr uint64_t kRemoveDir = 1ull << 4, kRemoveFile = 1ull << 5;
constexpr uint64_t kMakeChar = 1ull << 6, kMakeDir = 1ull << 7, kMakeReg = 1ull << 8, kMakeSock = 1ull << 9;
constexpr uint64_t kMakeFifo = 1ull << 10, kMakeBlock = 1ull << 11, kMakeSym = 1ull << 12;
constexpr uint64_t kRefer = 1ull << 13;     // ABI 2
constexpr uint64_t kTruncate = 1ull << 14;  // ABI 3
constexpr uint64_t kScopeSignal = 1ull << 1;  // ABI 6

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif

long create_ruleset(const RulesetAttr* attr, size_t size, uint32_t flags) {
  return syscall(__NR_landlock_create_ruleset, attr, size, flags);
}

// Every right that writes, as far as this ABI names them (reads and ioctls stay unhandled: the
// CUDA driver's device ioctls must keep working).
uint64_t write_rights(int abi) {
  uint64_t rights = kWriteFile | kRemoveDir | kRemoveFile | kMakeChar | kMakeDir | kMakeReg | kMakeSock | kMakeFifo |
                    kMakeBlock | kMakeSym;
  if (abi >= 2) rights |= kRefer;
  if (abi >= 3) rights |= kTruncate;
  return rights;
}

// Adds one path's rule; false with *error set when the kernel refuses it. A missing path is skipped.
bool add_path(int ruleset, const std::string& path, uint64_t wanted, std::string* error) {
  const int fd = open(path.c_str(), O_PATH | O_CLOEXEC);
  // A path that is not there, or that this process may not open, gives it nothing to allow.
  if (fd < 0 && (errno == ENOENT || errno == ENOTDIR || errno == EACCES || errno == ELOOP)) return true;
  if (fd < 0) {
    *error = path + ": " + std::strerror(errno);
    return false;
  }
  struct stat st {};
  PathBeneath rule;
  // A file (not a folder) takes only the rights of files.
  const uint64_t file_rights = kExecute | kWriteFile | kReadFile | kTruncate;
  rule.allowed_access = fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode) ? wanted & file_rights : wanted;
  rule.parent_fd = fd;
  const long rc = syscall(__NR_landlock_add_rule, ruleset, kRulePathBeneath, &rule, 0);
  const int saved = errno;
  close(fd);
  if (rc != 0) *error = "rule for " + path + ": " + std::strerror(saved);
  return rc == 0;
}

}  // namespace

int landlock_abi() {
  const long abi = create_ruleset(nullptr, 0, kCreateRulesetVersion);
  return abi > 0 ? static_cast<int>(abi) : 0;
}

std::string LandlockReport::summary() const {
  if (abi == 0) return "no landlock" + (error.empty() ? std::string() : " (" + error + ")");
  std::string out = "landlock ABI " + std::to_string(abi) + ": ";
  out += writes_confined ? "writes only beneath its folders" : "writes not confined";
  if (reads_confined) out += ", reads only beneath its allow-list";
  out += signals_scoped ? ", signals within its domain" : ", signals not scoped";
  if (!error.empty()) out += " (" + error + ")";
  return out;
}

LandlockReport restrict_with_landlock(const LandlockRules& rules) {
  LandlockReport report;
  report.abi = landlock_abi();
  if (report.abi == 0) {
    report.error = "the kernel offers none";
    return report;
  }
  RulesetAttr attr;
  const uint64_t rights = write_rights(report.abi);
  const uint64_t reads = rules.restrict_reads ? kReadRights : 0;
  attr.handled_access_fs = rights | reads;
  const bool scope = rules.scope_signals && report.abi >= 6;
  if (scope) attr.scoped = kScopeSignal;
  const int ruleset = static_cast<int>(create_ruleset(&attr, sizeof attr, 0));
  if (ruleset < 0) {
    report.error = std::string("landlock_create_ruleset: ") + std::strerror(errno);
    return report;
  }
  bool ok = true;
  for (const std::string& path : rules.writable) ok = ok && add_path(ruleset, path, rights | reads, &report.error);
  for (const std::string& path : rules.write_files)
    ok = ok && add_path(ruleset, path, kWriteFile | (report.abi >= 3 ? kTruncate : 0) | (reads & kReadFile), &report.error);
  for (const std::string& path : rules.readable)
    ok = ok && (!rules.restrict_reads || add_path(ruleset, path, kReadRights, &report.error));
  if (ok && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    ok = false, report.error = std::string("no_new_privs: ") + std::strerror(errno);
  if (ok && syscall(__NR_landlock_restrict_self, ruleset, 0) != 0)
    ok = false, report.error = std::string("landlock_restrict_self: ") + std::strerror(errno);
  close(ruleset);
  report.writes_confined = ok;
  report.reads_confined = ok && rules.restrict_reads;
  report.signals_scoped = ok && scope;
  if (ok && rules.scope_signals && !scope) report.error = "signals need ABI 6";
  return report;
}

}  // namespace kmcts
