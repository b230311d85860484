// libkmcts_kb_guard.so: see kb_guard.h.
#include "hardware/kernelbench/guard/kb_guard.h"

#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "core/text.hpp"
#include "hardware/worker/landlock.hpp"

namespace {

// The filter; "" when it holds, else why not.
std::string load_filter(const kmcts::LandlockReport& landlock, pid_t parent) {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) return "seccomp_init failed";
  const auto deny = SCMP_ACT_ERRNO(EPERM);
  int rc = seccomp_rule_add(ctx, deny, SCMP_SYS(setsid), 0);
  if (rc == 0) rc = seccomp_rule_add(ctx, deny, SCMP_SYS(prctl), 1, SCMP_A0_32(SCMP_CMP_EQ, PR_SET_CHILD_SUBREAPER));
  // A child made with CLONE_PARENT would be the harness's, outside the tree the harness stops
  // and kills. clone3's flags lie in memory a filter cannot read: ENOSYS, on which glibc makes
  // its threads and processes with clone, whose flags it can.
  if (rc == 0) rc = seccomp_rule_add(ctx, deny, SCMP_SYS(clone), 1, SCMP_A0_64(SCMP_CMP_MASKED_EQ, CLONE_PARENT, CLONE_PARENT));
  if (rc == 0) rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
  // Below ABI 3 Landlock cannot hold truncate(2) by path.
  if (rc == 0 && landlock.writes_confined && landlock.abi < 3) rc = seccomp_rule_add(ctx, deny, SCMP_SYS(truncate), 0);
  if (!landlock.signals_scoped && parent > 0) {
    // The kernel reads these pid arguments as 32-bit ints: the harness, its group, everyone.
    const pid_t group = getpgid(parent);
    std::vector<scmp_datum_t> targets = {static_cast<scmp_datum_t>(parent), static_cast<scmp_datum_t>(-1)};
    if (group > 0) targets.push_back(static_cast<scmp_datum_t>(static_cast<uint32_t>(-group)));
    for (int call : {SCMP_SYS(kill), SCMP_SYS(tgkill), SCMP_SYS(tkill), SCMP_SYS(rt_sigqueueinfo),
                     SCMP_SYS(rt_tgsigqueueinfo), SCMP_SYS(pidfd_open)})
      for (scmp_datum_t target : targets)
        if (rc == 0) rc = seccomp_rule_add(ctx, deny, call, 1, SCMP_A0_32(SCMP_CMP_EQ, target));
    // A pidfd opened through /proc, and signals a file owner gets (F_SETOWN with O_ASYNC).
    for (int call : {SCMP_SYS(pidfd_send_signal), SCMP_SYS(pidfd_getfd)})
      if (rc == 0) rc = seccomp_rule_add(ctx, deny, call, 0);
    for (int op : {F_SETOWN, F_SETOWN_EX, F_SETSIG})
      if (rc == 0) rc = seccomp_rule_add(ctx, deny, SCMP_SYS(fcntl), 1, SCMP_A1_32(SCMP_CMP_EQ, op));
  }
  if (rc == 0) rc = seccomp_load(ctx);
  seccomp_release(ctx);
  return rc == 0 ? "" : std::string("seccomp: ") + std::strerror(-rc);
}

}  // namespace

extern "C" int kmcts_kb_guard(const char* writable, const char* write_files, int parent, char* report,
                              size_t report_len) {
  std::string text;
  int status = 0;
  try {
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) text += std::string("no subreaper: ") + std::strerror(errno) + "; ";
    kmcts::LandlockRules rules;
    rules.writable = kmcts::split_list(writable ? writable : "", '\n');
    rules.write_files = kmcts::split_list(write_files ? write_files : "", '\n');
    const kmcts::LandlockReport landlock = kmcts::restrict_with_landlock(rules);
    text += landlock.summary();
    const std::string filter = load_filter(landlock, parent);
    if (filter.empty()) {
      text += landlock.signals_scoped ? "; seccomp: no setsid, no CLONE_PARENT, subreaper kept"
                                      : "; seccomp: no setsid, no CLONE_PARENT, subreaper kept, no signal to the harness";
    } else {
      text += "; " + filter, status = -1;
    }
  } catch (const std::exception& e) {
    text = std::string("guard: ") + e.what(), status = -1;
  }
  if (report && report_len) {
    std::strncpy(report, text.c_str(), report_len - 1);
    report[report_len - 1] = '\0';
  }
  return status;
}
