// Landlock (hardware/worker/landlock.hpp), in a forked child that restricts itself: writes only beneath
// its folders (a file, a folder, a removal, a rename into it from outside), existing device
// nodes still opened to write, from ABI 6 no signal to its parent, and, when asked, reads only
// beneath its allow-list. The kernel must offer Landlock (the dev VM's and CI's, 6.18, offer ABI 7):
// one without it fails here by name.
#include <doctest/doctest.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <string>

#include "hardware/worker/landlock.hpp"
#include "tests/unit/scratch.hpp"

using namespace kmcts;
namespace fs = std::filesystem;

namespace {

bool can_create(const fs::path& path) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) return false;
  close(fd);
  return true;
}

// Runs `check` in a forked child after it restricted itself with `rules`: its exit code, 0
// when every check held, else the number of the first that failed.
template <typename Check>
int in_restricted_child(const LandlockRules& rules, Check check) {
  const pid_t pid = fork();
  if (pid == 0) {
    const LandlockReport report = restrict_with_landlock(rules);
    if (!report.writes_confined) _exit(100);
    _exit(check(report));
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 200;
}

}  // namespace

TEST_CASE("landlock: a process writes only beneath its folders and signals only its own") {
  const int abi = landlock_abi();
  REQUIRE_MESSAGE(abi > 0, "this kernel offers no Landlock: the KernelBench candidate's guard cannot hold here");
  const fs::path root = test::fresh_dir("landlock");
  const fs::path mine = root / "mine", other = root / "other";
  fs::create_directories(mine);
  fs::create_directories(other / "old");
  REQUIRE(can_create(other / "existing"));
  LandlockRules rules;
  rules.writable = {mine.string(), (root / "absent").string()};  // a missing folder is skipped
  rules.write_files = {"/dev/null"};
  const int failed = in_restricted_child(rules, [&](const LandlockReport& report) {
    if (!can_create(mine / "file")) return 1;
    if (mkdir((mine / "sub").c_str(), 0700) != 0) return 2;
    if (can_create(other / "file") || errno != EACCES) return 3;
    if (open((other / "existing").c_str(), O_WRONLY) >= 0) return 4;  // an existing file, too
    if (rmdir((other / "old").c_str()) == 0) return 5;
    if (rename((other / "existing").c_str(), (mine / "taken").c_str()) == 0) return 6;
    if (open("/dev/null", O_WRONLY) < 0) return 7;
    if (open((other / "existing").c_str(), O_RDONLY) < 0) return 8;  // reads stay open
    if (report.abi >= 6 && (!report.signals_scoped || kill(getppid(), 0) == 0 || errno != EPERM)) return 9;
    if (kill(getpid(), 0) != 0) return 10;
    return 0;
  });
  CHECK(failed == 0);
  CHECK(fs::exists(other / "existing"));
  CHECK(fs::exists(other / "old"));
  CHECK_FALSE(fs::exists(other / "file"));
  fs::remove_all(root);
}

TEST_CASE("landlock: with reads confined, a process reads only beneath its allow-list") {
  REQUIRE(landlock_abi() > 0);
  const fs::path root = test::fresh_dir("landlock-reads");
  const fs::path seen = root / "seen", hidden = root / "hidden";
  fs::create_directories(seen);
  fs::create_directories(hidden);
  REQUIRE(can_create(seen / "file"));
  REQUIRE(can_create(hidden / "secret"));
  LandlockRules rules;
  rules.restrict_reads = true;
  rules.readable = {seen.string(), (hidden / "secret").string() + ".absent"};
  rules.write_files = {"/dev/null"};
  const int failed = in_restricted_child(rules, [&](const LandlockReport& report) {
    if (!report.reads_confined) return 1;
    const int fd = open((seen / "file").c_str(), O_RDONLY);
    if (fd < 0) return 2;
    close(fd);
    if (open((hidden / "secret").c_str(), O_RDONLY) >= 0 || errno != EACCES) return 3;
    if (opendir(hidden.c_str()) != nullptr) return 4;  // no listing either
    if (open("/dev/null", O_RDWR) < 0) return 5;        // a file it may write, it may read
    if (open((seen / "file").c_str(), O_WRONLY) >= 0) return 6;  // readable is not writable
    return 0;
  });
  CHECK(failed == 0);
  fs::remove_all(root);
}

TEST_CASE("landlock: the report says what held") {
  LandlockReport r;
  CHECK(r.summary() == "no landlock");
  r.abi = 5, r.writes_confined = true, r.error = "signals need ABI 6";
  CHECK(r.summary() == "landlock ABI 5: writes only beneath its folders, signals not scoped (signals need ABI 6)");
  r.reads_confined = true, r.error.clear();
  CHECK(r.summary() == "landlock ABI 5: writes only beneath its folders, reads only beneath its allow-list, signals not scoped");
}
