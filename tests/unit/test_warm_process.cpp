// Warm processes (hardware/warm_process.hpp) and the pool of warm KernelBench harnesses
// (hardware/kernelbench/warm_harness.hpp), driven by small bash stand-ins.
#include <doctest/doctest.h>

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "hardware/kernelbench/warm_harness.hpp"
#include "hardware/warm_process.hpp"

using namespace kmcts;

namespace {

WarmProcess bash(const std::string& script) { return WarmProcess({"bash", "-c", script}, {}); }

// No live process left in group `pid` (zombies, which the container's init may reap late,
// count as gone), within a second.
bool group_gone(pid_t pid) {
  for (int tick = 0; tick < 100; ++tick) {
    bool alive = false;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
      std::ifstream stat(entry.path() / "stat");
      std::string line;
      if (!std::getline(stat, line) || line.rfind(')') == std::string::npos) continue;
      std::istringstream rest(line.substr(line.rfind(')') + 2));
      char state = 0;
      long ppid = 0, group = 0;
      rest >> state >> ppid >> group;
      alive = alive || (group == pid && state != 'Z' && state != 'X');
    }
    if (!alive) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

}  // namespace

TEST_CASE("warm process: one reply line per request, the same process each time, its stderr per request") {
  WarmProcess p = bash("while IFS= read -r l; do echo \"log $l\" >&2; echo \"$$:$l\"; done");
  const WarmProcess::Reply a = p.request("first", 10);
  REQUIRE(a.line);
  CHECK(*a.line == std::to_string(p.pid()) + ":first");
  CHECK(a.log == "log first\n");
  const WarmProcess::Reply b = p.request("second", 10);
  REQUIRE(b.line);
  CHECK(*b.line == std::to_string(p.pid()) + ":second");
  CHECK(b.log == "log second\n");
  CHECK(p.usable());
}

TEST_CASE("warm process: a hang is killed at the limit with its whole group") {
  WarmProcess p = bash("read l; sleep 30 & sleep 30");
  const WarmProcess::Reply r = p.request("x", 0.3);
  CHECK(r.timed_out);
  CHECK_FALSE(r.line);
  CHECK_FALSE(p.usable());
  CHECK(group_gone(p.pid()));
  CHECK(p.request("again", 1).died);  // a killed process takes no more requests
}

TEST_CASE("warm process: an exit or a signal before replying is said, with what it printed") {
  WarmProcess exits = bash("read l; echo oops >&2; exit 3");
  const WarmProcess::Reply e = exits.request("x", 10);
  CHECK(e.died);
  CHECK(e.exit_code == 3);
  CHECK(e.log == "oops\n");
  WarmProcess crashes = bash("read l; kill -SEGV $$");
  const WarmProcess::Reply c = crashes.request("x", 10);
  CHECK(c.died);
  CHECK(c.signal == SIGSEGV);
  CHECK_FALSE(crashes.usable());
}

TEST_CASE("warm process: an oversized reply is cut off; a flood on stderr does not block the reply") {
  WarmProcess big = bash("read l; head -c 100000 /dev/zero | tr '\\0' x");
  const WarmProcess::Reply r = big.request("x", 10, 1000);
  CHECK(r.oversized);
  CHECK_FALSE(big.usable());
  WarmProcess noisy = bash("read l; head -c 5000000 /dev/zero | tr '\\0' e >&2; echo done");
  const WarmProcess::Reply n = noisy.request("x", 30, 1000, 100);
  REQUIRE(n.line);
  CHECK(*n.line == "done");
  CHECK(n.log.size() == 100);  // the last 100 bytes
}

TEST_CASE("warm process: ending it ends its group; a program that does not exist is an error") {
  pid_t pid = 0;
  {
    WarmProcess p = bash("sleep 30 & while read l; do :; done; sleep 30");  // ignores the end of its input
    pid = p.pid();
    CHECK_FALSE(group_gone(pid));
  }
  CHECK(group_gone(pid));
  CHECK_THROWS_AS(WarmProcess({"/nonexistent/kmcts-python"}, {}), std::runtime_error);
}

TEST_CASE("warm harness: reused until a reply says retire; single-use ones start the next ahead") {
  // Replies {"pid": PID, "retire": R, "nonce": N} where the request says {"retire": R, "nonce": N}.
  const std::string script =
      "while IFS= read -r l; do r=false; case $l in *'\"retire\":true'*) r=true;; esac; "
      "n=$(printf '%s' \"$l\" | sed -n 's/.*\"nonce\":\"\\([0-9a-f]*\\)\".*/\\1/p'); "
      "echo \"{\\\"pid\\\":$$,\\\"retire\\\":$r,\\\"nonce\\\":\\\"$n\\\"}\"; done";
  auto pid_of = [](const WarmHarness::Outcome& o) {
    REQUIRE(o.reply.line);
    CHECK_FALSE(o.forged);
    return nlohmann::json::parse(*o.reply.line).at("pid").get<int>();
  };
  WarmHarness reused({"bash", "-c", script}, {}, true);
  const int first = pid_of(reused.request({{"retire", false}}, 10));
  CHECK(pid_of(reused.request({{"retire", true}}, 10)) == first);
  CHECK(pid_of(reused.request({{"retire", false}}, 10)) != first);  // the one before retired

  WarmHarness single({"bash", "-c", script}, {}, false);
  const int a = pid_of(single.request({{"retire", false}}, 10));
  CHECK(pid_of(single.request({{"retire", false}}, 10)) != a);

  WarmHarness missing({"/nonexistent/kmcts-python"}, {}, true);
  missing.prestart();  // says nothing; the request does
  CHECK(missing.request({{"retire", false}}, 10).start_error.find("kmcts-python") != std::string::npos);
}

TEST_CASE("warm harness: a reply without the request's nonce is forged, and the process is not kept") {
  // Answers every request with a line that has no nonce, then with a second line.
  const std::string script = "while IFS= read -r l; do echo '{\"pid\":'$$',\"retire\":false}'; done";
  WarmHarness harness({"bash", "-c", script}, {}, true);
  const WarmHarness::Outcome first = harness.request({{"x", 1}}, 10);
  CHECK(first.forged);
  const WarmHarness::Outcome second = harness.request({{"x", 2}}, 10);
  REQUIRE(second.reply.line);
  REQUIRE(first.reply.line);
  CHECK(*second.reply.line != *first.reply.line);  // a new process: the forging one was let go
}
