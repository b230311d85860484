// A kernel host ended in order (HostLink::finish, for HIP hosts whose trace rocprofv3's tool
// writes as they exit) and the environment a host is given (KMCTS_TRACE_ROLE). HostLink drops
// the calling process's capabilities and makes it undumpable, so each case runs in a child of
// the test process, whose exit status carries the result.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "hardware/worker/host_link.hpp"

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

}  // namespace

TEST_CASE("host link: a host gets the added environment, and ends in order when its requests end") {
  CHECK(in_child([] {
          // A host that says ready with its role, then waits for the end of its requests.
          HostLink host(true, "/bin/sh",
                        {"-c", "echo \"{\\\"ready\\\":true,\\\"role\\\":\\\"$KMCTS_TRACE_ROLE\\\"}\" >&3; cat >/dev/null"}, {},
                        {"KMCTS_TRACE_ROLE=candidate"});
          const auto ready = host.wait_ready();  // it is stopped from here on
          if (ready.value("role", "") != "candidate") return 1;
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
