// Worker folders (hardware/worker_result.hpp): one a process killed with SIGKILL left behind is
// reclaimed, one still in use or too young to hold its lock yet stays.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "hardware/worker_result.hpp"
#include "scratch.hpp"

using namespace kmcts;
namespace fs = std::filesystem;

namespace {

// The folders of this prefix under the temporary folder.
int count_folders(const std::string& prefix) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(fs::temp_directory_path()))
    if (e.path().filename().string().rfind(prefix + "-", 0) == 0) ++n;
  return n;
}

}  // namespace

TEST_CASE("worker folders: a killed process's folder is reclaimed, a live one stays") {
  const fs::path dir = kmcts::test::fresh_dir("worker-folder");
  fs::create_directories(dir);
  std::ofstream(dir / "a.so") << "a";
  std::ofstream(dir / "b.so") << "b";
  const std::string prefix = "kmcts-test" + std::to_string(::getpid() % 10000);
  reclaim_worker_folders(prefix);
  REQUIRE(count_folders(prefix) == 0);
  // A child makes a folder, says so, and is killed with it still open.
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t child = ::fork();
  if (child == 0) {
    WorkerFolder folder(prefix, (dir / "a.so").string(), (dir / "b.so").string());
    char c = 1;
    (void)!::write(ready[1], &c, 1);
    ::pause();
    ::_exit(0);
  }
  char c = 0;
  REQUIRE(::read(ready[0], &c, 1) == 1);
  WorkerFolder mine(prefix, (dir / "a.so").string(), (dir / "b.so").string());
  CHECK(count_folders(prefix) == 2);
  CHECK(reclaim_worker_folders(prefix) == 0);  // the child still holds its lock
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  CHECK(count_folders(prefix) == 2);  // its destructor never ran
  // A folder with no lock file yet, as one being made this instant: too young to reclaim.
  const fs::path young = fs::temp_directory_path() / (prefix + "-young1");
  fs::create_directories(young);
  CHECK(reclaim_worker_folders(prefix) == 1);  // the killed child's
  CHECK(fs::exists(mine.dir()));
  CHECK(fs::exists(young));
  fs::last_write_time(young, fs::file_time_type::clock::now() - std::chrono::minutes(5));
  CHECK(reclaim_worker_folders(prefix) == 1);  // now old enough: left by an older kmcts
  CHECK(count_folders(prefix) == 1);
  ::close(ready[0]);
  ::close(ready[1]);
}
