// The KernelBench prebuild, confined (hardware/kernelbench/kb_prebuild.hpp): a candidate whose
// import tries to write outside its extension folder and to read the user's home gets neither,
// while its own folder stays writable and the build's answer comes back. Needs only python3:
// prebuild.py imports the candidate, which here builds nothing.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/files.hpp"
#include "hardware/confine.hpp"
#include "hardware/kernelbench/kb_prebuild.hpp"

using namespace kmcts;
namespace fs = std::filesystem;

TEST_CASE("kernelbench prebuild: the candidate's import is confined to its own folder") {
  const ConfinementSupport& support = confinement_support();
  if (!support.mount_ns) {
    MESSAGE("no mount namespace here: " << support.refused);
    return;
  }
  const fs::path root = fs::absolute("kmcts-prebuild-" + std::to_string(getpid()));
  fs::create_directories(root / "home" / ".config");
  fs::create_directories(root / "ext");
  fs::create_directories(root / "elsewhere");
  write_file_atomic(root / "home" / ".config" / "keys", "sekrit\n");
  const std::string candidate_text = R"(import os
found = []
for path in ["ELSEWHERE/marker", os.path.join(os.environ["TORCH_EXTENSIONS_DIR"], "own.txt")]:
    try:
        with open(path, "w") as f:
            f.write("x")
        found.append("wrote " + path)
    except OSError as e:
        found.append("refused " + path)
try:
    found.append("home: " + open("HOME/.config/keys").read().strip())
except OSError:
    found.append("home hidden")
found.append("uid %d" % os.getuid())
with open(os.path.join(os.environ["TORCH_EXTENSIONS_DIR"], "findings.txt"), "w") as f:
    f.write("\n".join(found) + "\n")
# load_inline
)";
  std::string text = candidate_text;
  for (auto [from, to] : {std::pair<std::string, std::string>{"ELSEWHERE", (root / "elsewhere").string()},
                          {"HOME", (root / "home").string()}}) {
    for (size_t at; (at = text.find(from)) != std::string::npos;) text.replace(at, from.size(), to);
  }
  write_file_atomic(root / "candidate.py", text);
  const char* old_home = std::getenv("HOME");
  const std::string saved = old_home ? old_home : "";
  setenv("HOME", (root / "home").c_str(), 1);
  PrebuildSpec spec;
  spec.python = "python3";
  spec.harness_dir = fs::path(KMCTS_SOURCE_DIR) / "hardware" / "kernelbench" / "harness";
  spec.candidate = root / "candidate.py";
  spec.extensions = root / "ext";
  spec.env = {{"TORCH_EXTENSIONS_DIR", (root / "ext").string()}};
  spec.timeout_s = 60;
  const SandboxResult run = run_prebuild(spec);
  if (old_home) setenv("HOME", saved.c_str(), 1);
  else unsetenv("HOME");
  INFO(run.error << run.err);
  CHECK(run.out.find("\"ok\": true") != std::string::npos);
  CHECK(run.confinement.find("read-only file system") != std::string::npos);
  const std::string findings = read_file(root / "ext" / "findings.txt");
  INFO(findings);
  CHECK(findings.find("refused " + (root / "elsewhere").string()) != std::string::npos);
  CHECK(findings.find("wrote " + (root / "ext").string()) != std::string::npos);
  CHECK(findings.find("home hidden") != std::string::npos);
  CHECK_FALSE(fs::exists(root / "elsewhere" / "marker"));
  struct stat st {};
  REQUIRE(::stat((root / "ext" / "own.txt").c_str(), &st) == 0);
  CHECK(st.st_uid == geteuid());  // handed back from the build's uid
  fs::remove_all(root);
}
