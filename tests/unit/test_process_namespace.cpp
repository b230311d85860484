// A confined child's process namespace (hardware/confine.hpp): it cannot signal kmcts or any
// other process of kmcts's uid, it leaves nothing behind, its caller still sees the program's
// own exit status or signal, and RLIMIT_NPROC stops a fork bomb where the kernel applies it.
// Both kinds of confined child are tried: a uid of its own (or a user namespace), and keep_uid
// (kmcts's uid without capabilities, as the KernelBench harness runs).
#include <doctest/doctest.h>

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "hardware/confine.hpp"
#include "hardware/sandbox.hpp"

using namespace kmcts;

namespace {

// A process of kmcts's own uid, not confined: what a candidate must not reach.
struct Victim {
  pid_t pid = -1;
  Victim() {
    char program[] = "sleep", seconds[] = "30";
    char* argv[] = {program, seconds, nullptr};
    char* envp[] = {nullptr};
    if (posix_spawnp(&pid, "sleep", nullptr, nullptr, argv, envp) != 0) pid = -1;
  }
  ~Victim() {
    if (pid > 0) kill(pid, SIGKILL), waitpid(pid, nullptr, 0);
  }
  bool alive() const {
    siginfo_t info{};
    return pid > 0 && waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == 0;
  }
};

// Whether a process whose command line holds `marker` is alive (a zombie is not).
bool running_with(const std::string& marker) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    FILE* f = std::fopen((entry.path() / "cmdline").c_str(), "r");
    if (!f) continue;
    char buffer[512] = {0};
    const size_t n = std::fread(buffer, 1, sizeof buffer - 1, f);
    std::fclose(f);
    for (size_t i = 0; i < n; ++i)
      if (buffer[i] == '\0') buffer[i] = ' ';
    if (std::string(buffer, n).find(marker) == std::string::npos) continue;
    FILE* status = std::fopen((entry.path() / "stat").c_str(), "r");
    if (!status) continue;
    char state = '?';
    const int got = std::fscanf(status, "%*d %*s %c", &state);
    std::fclose(status);
    if (got == 1 && state != 'Z') return true;
  }
  return false;
}

}  // namespace

TEST_CASE("process namespace: no process outside it can be signalled, and nothing outlives the program") {
  const ConfinementSupport& support = confinement_support();
  if (!support.pid_ns) {
    MESSAGE("no process namespace here: " << support.refused);
    return;
  }
  for (const bool keep_uid : {false, true}) {
    CAPTURE(keep_uid);
    Victim victim;
    REQUIRE(victim.pid > 0);
    SandboxLimits limits;
    limits.confine = true;
    limits.keep_uid = keep_uid;
    const std::string daemon = "31.4159" + std::to_string(keep_uid);
    const std::string script =
        "for p in " + std::to_string(victim.pid) + " " + std::to_string(getpid()) +
        "; do kill -TERM $p 2>/dev/null && echo SIGNALLED $p; done; "
        "kill -TERM -1 2>/dev/null; "  // everything it may signal: in its namespace, nothing but itself
        "echo pid $$; ls /proc | grep -c '^[0-9]'; (sleep " + daemon + " &); echo end";
    const SandboxResult r = run_sandboxed({"sh", "-c", script}, limits, "/");
    INFO(r.error << r.err << r.out);
    CHECK(r.confinement.find("process namespace") != std::string::npos);
    CHECK(r.out.find("SIGNALLED") == std::string::npos);
    CHECK(victim.alive());
    CHECK(r.out.find("pid 2\n") != std::string::npos);  // its init is 1, outside kmcts's pids
    if (support.own_proc) {
      // Its own /proc lists its namespace only: init, the shell and what it runs.
      const size_t at = r.out.find("pid 2\n") + 6;
      CHECK(std::stoi(r.out.substr(at)) <= 6);
    }
    CHECK_FALSE(running_with("sleep " + daemon));
  }
}

TEST_CASE("process namespace: the caller sees the program's own exit code and signal") {
  SandboxLimits limits;
  limits.confine = true;
  SandboxResult r = run_sandboxed({"sh", "-c", "exit 7"}, limits, "/");
  CHECK(r.started);
  CHECK(r.exit_code == 7);
  CHECK(r.signal == 0);
  r = run_sandboxed({"sh", "-c", "echo before; kill -SEGV $$"}, limits, "/");
  CHECK(r.signal == SIGSEGV);
  CHECK(r.out == "before\n");
  r = run_sandboxed({"sh", "-c", "kill -ABRT $$"}, limits, "/");
  CHECK(r.signal == SIGABRT);
  // A timeout still kills it all: the keeper, its init and the program.
  limits.timeout_s = 0.5;
  r = run_sandboxed({"sh", "-c", "sleep 27.1828 & sleep 27.1828"}, limits, "/");
  CHECK(r.timed_out);
  CHECK(r.wall_seconds < 5);
  CHECK_FALSE(running_with("sleep 27.1828"));
}

TEST_CASE("process namespace: a fork bomb stops at evaluator.max_processes") {
  const ConfinementSupport& support = confinement_support();
  if (!support.root && !support.user_ns) {  // root's own uid is exempt from RLIMIT_NPROC
    MESSAGE("neither a uid of its own nor a user namespace here: " << support.refused);
    return;
  }
  SandboxLimits limits;
  limits.confine = true;
  limits.max_processes = 24;
  // Processes of the uid it runs as count: its own uid as root, a user namespace's otherwise.
  // dash stops at the first fork it is refused; each started sleep says its number first.
  const SandboxResult r =
      run_sandboxed({"sh", "-c", "for i in $(seq 100); do echo $i; sleep 5 & done; echo ALL-STARTED"}, limits, "/");
  INFO(r.error << r.err << r.out << " exit " << r.exit_code << " signal " << r.signal);
  CHECK(r.confinement.find("rlimits") != std::string::npos);
  CHECK(r.out.find("ALL-STARTED") == std::string::npos);
  const size_t last = r.out.find_last_of('\n', r.out.size() - 2);
  CHECK(std::stoi(r.out.substr(last == std::string::npos ? 0 : last + 1)) <= 24);
  CHECK(r.wall_seconds < 4);  // the sleeps it started did not hold it up: killed with the namespace
}

TEST_CASE("process namespace: the program leads a session of its own; kernel settings are read-only") {
  const ConfinementSupport& support = confinement_support();
  if (!support.pid_ns || !support.mount_ns) {
    MESSAGE("no process or mount namespace here: " << support.refused);
    return;
  }
  for (const bool keep_uid : {false, true}) {  // keep_uid under root: uid 0 without capabilities
    CAPTURE(keep_uid);
    SandboxLimits limits;
    limits.confine = true;
    limits.keep_uid = keep_uid;
    // Fields of /proc/PID/stat: pid (comm) state ppid pgrp session.
    const SandboxResult r = run_sandboxed(
        {"sh", "-c", "read -r line < /proc/$$/stat; set -- $line; echo session $6; "
                     "for f in /proc/sys/kernel/core_pattern /proc/sys/vm/drop_caches /proc/sysrq-trigger; do "
                     "[ -w $f ] && echo WRITABLE $f; done; echo end"},
        limits, "/");
    INFO(r.error << r.err << r.out);
    CHECK(r.out.find("session 2\n") != std::string::npos);  // not kmcts's session, nor its terminal
    CHECK(r.out.find("WRITABLE") == std::string::npos);
    CHECK(r.out.find("end") != std::string::npos);
  }
}

TEST_CASE("process namespace: its keeper and init, forks of the caller, do not count against the memory limit") {
  // The caller holds 512 MiB; a confined child that holds next to nothing stays under 256 MiB.
  std::vector<char> held(512u << 20);
  for (size_t i = 0; i < held.size(); i += 4096) held[i] = static_cast<char>(i);
  SandboxLimits limits;
  limits.confine = true;
  limits.max_rss_mb = 256;
  const SandboxResult r = run_sandboxed({"sleep", "0.3"}, limits, "/");
  CHECK(r.exited_cleanly());
  CHECK_FALSE(r.memory_exceeded);
  CHECK(held[4096] == static_cast<char>(4096));
}

TEST_CASE("sandbox: a child that fills a watched folder past its bytes or its entries is stopped") {
  // A HIP candidate's trace folder must stay writable from inside its process (rocprofv3's tool
  // writes there); RLIMIT_FSIZE bounds a file, this bounds the folder (issue 31).
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("kmcts-test-watched-" + std::to_string(getpid()));
  struct Case {
    const char* what;
    const char* script;
  };
  for (const Case& c : {Case{"many small files", "i=0; while [ $i -lt 5000 ]; do : > f$i; i=$((i+1)); done; sleep 20"},
                        Case{"one large file", "head -c 4000000 /dev/zero > big; sleep 20"}}) {
    CAPTURE(c.what);
    fs::remove_all(dir);
    fs::create_directories(dir);
    SandboxLimits limits;
    limits.timeout_s = 30;
    limits.watched_folder = dir;
    limits.max_folder_bytes = 1u << 20, limits.max_folder_entries = 100;
    const SandboxResult r = run_sandboxed({"sh", "-c", c.script}, limits, dir);
    CHECK(r.folder_exceeded);
    CHECK(r.signal == SIGKILL);
    CHECK(r.wall_seconds < 15);  // stopped, not left to its timeout
  }
  fs::remove_all(dir);
  fs::create_directories(dir);
  SandboxLimits limits;
  limits.watched_folder = dir;
  limits.max_folder_bytes = 1u << 20, limits.max_folder_entries = 100;
  const SandboxResult within = run_sandboxed({"sh", "-c", "head -c 1000 /dev/zero > small; sleep 0.2"}, limits, dir);
  CHECK(within.exited_cleanly());
  CHECK_FALSE(within.folder_exceeded);
  fs::remove_all(dir);
}
