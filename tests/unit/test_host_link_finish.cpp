// A kernel host ended in order (HostLink::finish, for HIP hosts whose trace rocprofv3's tool
// writes as they exit), the environment a host is given (KMCTS_TRACE_ROLE), the worker left
// dumpable under a profiler, and a HIP host's files kept to its own trace folder. HostLink drops
// the calling process's capabilities and makes it undumpable, and Landlock cannot be undone, so
// each case runs in a child of the test process, whose exit status carries the result.
#include <doctest/doctest.h>

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "hardware/worker/host_link.hpp"
#include "hardware/worker/host_serve.hpp"
#include "hardware/worker/landlock.hpp"

namespace {

using kmcts::worker::HostLink;

// Runs `body` in a forked child; its return value is the child's exit code (0 = passed).
int in_child(int (*body)()) {
  const pid_t pid = fork();
  if (pid == 0) {
    int code = 99;
    try {
      code = body();
    } catch (...) {
      code = 98;
    }
    std::_Exit(code);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

// The state letter of /proc/PID/stat ('T': stopped), '?' when unreadable.
char process_state(pid_t pid) {
  std::FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r");
  if (!f) return '?';
  char line[512] = {0};
  const size_t n = std::fread(line, 1, sizeof line - 1, f);
  std::fclose(f);
  const char* close = std::strrchr(line, ')');  // the name may hold spaces and parentheses
  return n > 0 && close && close[1] == ' ' ? close[2] : '?';
}

}  // namespace

TEST_CASE("host link: a host gets the added environment, and ends in order when its requests end") {
  CHECK(in_child([] {
          // A host that says ready with its role (and how many times it has one), then waits for
          // the end of its requests. The worker's own value of the name is replaced, not doubled.
          setenv("KMCTS_TRACE_ROLE", "reference", 1);
          HostLink host(true, "/bin/sh",
                        {"-c", "echo \"{\\\"ready\\\":true,\\\"role\\\":\\\"$KMCTS_TRACE_ROLE\\\",\\\"count\\\":$(env | grep -c "
                               "'^KMCTS_TRACE_ROLE=')}\" >&3; cat >/dev/null"},
                        {}, {"KMCTS_TRACE_ROLE=candidate"});
          const auto ready = host.wait_ready();  // it is stopped from here on
          if (ready.value("role", "") != "candidate" || ready.value("count", 0) != 1) return 1;
          if (host.finish(10) != "exited with status 0") return 2;
          return host.finish(1) == "not running" ? 0 : 3;
        }) == 0);
}

TEST_CASE("host link: a host that does not end when its requests end is killed at the timeout") {
  CHECK(in_child([] {
          HostLink host(false, "/bin/sh", {"-c", "echo '{\"ready\":true}' >&3; exec sleep 60"});
          host.wait_ready();
          const std::string how = host.finish(0.5);
          return how.find("killed after") == 0 ? 0 : 1;
        }) == 0);
}

TEST_CASE("host link: the worker stays dumpable for a profiler to attach, and only then") {
  // ncu and compute-sanitizer run confined under the worker's uid without capabilities, and read
  // its /proc files as they attach: "Launching the target application failed" while it made
  // itself undumpable (issue 30, on the H100).
  for (bool profiled : {false, true}) {
    CAPTURE(profiled);
    CHECK(in_child(profiled ? +[] {
            kmcts::worker::set_under_profiler(true);
            HostLink host(true, "/bin/sh", {"-c", "echo '{\"ready\":true}' >&3; cat >/dev/null"});
            host.wait_ready();
            // Nor is the host stopped after its reply: a stopped host cannot answer its profiler.
            usleep(100000);
            if (process_state(host.pid()) == 'T') return 2;
            return prctl(PR_GET_DUMPABLE) == 1 && host.finish(10) == "exited with status 0" ? 0 : 1;
          }
                            : +[] {
                                HostLink host(true, "/bin/sh", {"-c", "echo '{\"ready\":true}' >&3; cat >/dev/null"});
                                host.wait_ready();
                                usleep(100000);
                                if (process_state(host.pid()) != 'T') return 2;  // stopped between requests
                                return prctl(PR_GET_DUMPABLE) == 0 && host.finish(10) == "exited with status 0" ? 0 : 1;
                              }) == 0);
  }
}

TEST_CASE("host files: a HIP host writes only its own role's trace folder, never the other's") {
  if (kmcts::landlock_abi() == 0) {
    MESSAGE("no Landlock on this kernel: skipped (the hip evaluator refuses to measure confined there)");
    return;
  }
  namespace fs = std::filesystem;
  static fs::path dir;
  dir = fs::temp_directory_path() / ("kmcts-test-host-files-" + std::to_string(getpid()));
  fs::remove_all(dir);
  for (const char* role : {"reference", "candidate"}) fs::create_directories(dir / role);
  CHECK(in_child([] {
          setenv("KMCTS_TRACE_DIR", dir.c_str(), 1);
          setenv("KMCTS_TRACE_ROLE", "candidate", 1);
          kmcts::worker::confine_host_files((dir / "candidate").string(), true);
          std::FILE* own = std::fopen((dir / "candidate" / "102_kernel_trace.csv").c_str(), "w");
          if (!own) return 1;
          std::fclose(own);
          if (std::fopen((dir / "reference" / "101_kernel_trace.csv").c_str(), "w")) return 2;  // the reference's trace
          if (std::fopen((dir / "planted.csv").c_str(), "w")) return 3;  // beside the folders
          return 0;
        }) == 0);
  CHECK(fs::exists(dir / "candidate" / "102_kernel_trace.csv"));
  CHECK_FALSE(fs::exists(dir / "reference" / "101_kernel_trace.csv"));
  fs::remove_all(dir);
}
