#include "hardware/worker/host_serve.hpp"

#include <dlfcn.h>
#include <sched.h>
#include <seccomp.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "core/text.hpp"
#include "hardware/worker/landlock.hpp"

namespace kmcts::worker {

void confine_host_files(const std::string& kernel, bool hip, bool profiled) {
  LandlockRules rules;
  rules.restrict_reads = true;
  rules.scope_signals = false;  // the seccomp filter of confine_kernel_host holds signals
  rules.readable = {"/usr", "/lib", "/lib64", "/etc", "/proc", "/sys", "/dev", kernel};
  if (const char* paths = std::getenv("LD_LIBRARY_PATH"))
    for (const std::string& dir : split_list(paths, ':'))
      if (dir[0] == '/') rules.readable.push_back(dir);
  std::error_code ec;
  const auto program = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) rules.readable.push_back((program.parent_path().parent_path() / "lib").string());  // a bundle's libraries
  rules.write_files = {"/dev", "/proc/self"};
  if (profiled) {
    rules.readable.insert(rules.readable.end(), {"/opt", "/tmp"});
    rules.writable.push_back("/tmp");
  }
  if (hip) {
    const char* rocm = std::getenv("ROCM_PATH");
    const std::string root = rocm && rocm[0] == '/' ? rocm : "/opt/rocm";
    if (std::filesystem::exists(root)) rules.readable.push_back(root);
    const char* traces = std::getenv("KMCTS_TRACE_DIR");
    const char* role = std::getenv("KMCTS_TRACE_ROLE");
    if (traces && traces[0] != '\0' && role && (std::string(role) == "reference" || std::string(role) == "candidate")) {
      const std::string own = std::string(traces) + "/" + role;  // made by the evaluator before the run
      rules.readable.push_back(own), rules.writable.push_back(own);
    }
  }
  if (landlock_abi() == 0) return;
  const LandlockReport report = restrict_with_landlock(rules);
  if (!report.reads_confined) throw std::runtime_error("the kernel host's Landlock rules: " + report.error);
}

void confine_kernel_host() {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) throw std::runtime_error("seccomp_init failed");
  const auto self = static_cast<scmp_datum_t>(getpid());
  const auto deny = SCMP_ACT_ERRNO(EPERM);
  int rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
  auto add = [&](int syscall, unsigned count, scmp_arg_cmp a = {}) {
    if (rc == 0) rc = count ? seccomp_rule_add(ctx, deny, syscall, 1, a) : seccomp_rule_add(ctx, deny, syscall, 0);
  };
  // Signals: only to this process. The kernel reads these pid arguments as 32-bit ints.
  for (int call : {SCMP_SYS(kill), SCMP_SYS(tgkill), SCMP_SYS(rt_sigqueueinfo), SCMP_SYS(rt_tgsigqueueinfo)})
    add(call, 1, SCMP_A0_32(SCMP_CMP_NE, self));
  for (int call : {SCMP_SYS(tkill), SCMP_SYS(pidfd_open), SCMP_SYS(pidfd_send_signal), SCMP_SYS(pidfd_getfd),
                   SCMP_SYS(fork), SCMP_SYS(vfork)})
    add(call, 0);
  // clone3's flags lie in memory a filter cannot read: ENOSYS, on which glibc makes its threads
  // with clone, whose flags it can.
  if (rc == 0) rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
  add(SCMP_SYS(clone), 1, SCMP_A0_64(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));  // a process, not a thread
  // Priorities, affinities, schedulers, limits: of itself only (0 names the caller).
  add(SCMP_SYS(setpriority), 1, SCMP_A1_32(SCMP_CMP_NE, 0));
  add(SCMP_SYS(ioprio_set), 1, SCMP_A1_32(SCMP_CMP_NE, 0));
  for (int call : {SCMP_SYS(sched_setaffinity), SCMP_SYS(sched_setscheduler), SCMP_SYS(sched_setparam),
                   SCMP_SYS(sched_setattr), SCMP_SYS(prlimit64)})
    add(call, 1, SCMP_A0_32(SCMP_CMP_NE, 0));
  if (rc == 0) rc = seccomp_load(ctx);
  seccomp_release(ctx);
  if (rc != 0) throw std::runtime_error("the kernel host's filter: " + std::string(strerror(-rc)));
}

void* load_kernel_symbol(const std::string& path, const char* symbol, const char* header) {
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_LOCAL | RTLD_NOW);
  if (!handle) {
    const char* why = dlerror();
    send_reply_and_exit({{"load_error", std::string("cannot be loaded: ") + (why ? why : "unknown dlopen error")}}, 0);
  }
  void* address = dlsym(handle, symbol);
  if (!address)
    send_reply_and_exit({{"load_error", std::string("does not export ") + symbol + " (it must be extern \"C\", as declared in " +
                                            header + ")"}},
                        0);
  return address;
}

std::optional<std::string> next_request() {
  static std::string buffer;
  for (;;) {
    if (auto nl = buffer.find('\n'); nl != std::string::npos) {
      std::string line = buffer.substr(0, nl);
      buffer.erase(0, nl + 1);
      return line;
    }
    char chunk[4096];
    const ssize_t n = ::read(kHostRequestFd, chunk, sizeof chunk);
    if (n <= 0) return std::nullopt;
    buffer.append(chunk, static_cast<size_t>(n));
  }
}

void send_reply(const nlohmann::json& reply) {
  const std::string text = reply.dump() + "\n";
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(kHostReplyFd, text.data() + done, text.size() - done);
    if (n <= 0) std::_Exit(4);
    done += static_cast<size_t>(n);
  }
}

void send_reply_and_exit(const nlohmann::json& reply, int code) {
  send_reply(reply);
  std::fflush(nullptr);
  std::_Exit(code);
}

}  // namespace kmcts::worker
