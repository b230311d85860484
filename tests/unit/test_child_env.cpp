// What kmcts's children get of its environment (hardware/child_env.hpp): an allow-list, no
// secrets unless named in evaluator.env_passthrough, through both ways children start.
#include <doctest/doctest.h>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "core/files.hpp"
#include "hardware/child_env.hpp"
#include "hardware/confine.hpp"
#include "hardware/sandbox.hpp"
#include "hardware/warm_process.hpp"

using namespace kmcts;

TEST_CASE("child env: the allow-list, and secrets only when named") {
  set_env_passthrough({});
  for (const char* name : {"PATH", "HOME", "LANG", "LC_ALL", "TZ", "CUDA_VISIBLE_DEVICES", "CUDA_HOME", "LD_LIBRARY_PATH",
                           "TORCH_EXTENSIONS_DIR", "PYTORCH_NVCC", "TRITON_CACHE_DIR", "HIP_VISIBLE_DEVICES",
                           "PYTHONPATH", "VIRTUAL_ENV", "KMCTS_REAL_CXX", "NVIDIA_VISIBLE_DEVICES", "OMP_NUM_THREADS"})
    CHECK_MESSAGE(passes_to_children(name), name);
  for (const char* name : {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GITHUB_TOKEN", "HF_TOKEN", "AWS_ACCESS_KEY_ID",
                           "AWS_REGION", "DB_PASSWORD", "MY_SECRET", "KMCTS_E2E_KEY", "CUDA_SECRET", "SSH_AUTH_SOCK",
                           "DISPLAY", "LD_PRELOAD", "http_proxy", "USER", "GCP_CREDENTIALS"})
    CHECK_MESSAGE(!passes_to_children(name), name);
  set_env_passthrough({"HF_TOKEN", "MY_*"});
  CHECK(passes_to_children("HF_TOKEN"));
  CHECK(passes_to_children("MY_SECRET"));
  CHECK(passes_to_children("MY_OTHER"));
  CHECK_FALSE(passes_to_children("OPENAI_API_KEY"));
  set_env_passthrough({});
}

TEST_CASE("child env: a sandboxed child and a warm process see no key") {
  setenv("KMCTS_CHILD_ENV_TEST_KEY", "sekrit-in-env", 1);
  setenv("TORCH_CHILD_ENV_TEST", "kept", 1);
  set_env_passthrough({});
  SandboxResult r = run_sandboxed({"env"}, SandboxLimits{});
  REQUIRE(r.exited_cleanly());
  CHECK(r.out.find("sekrit-in-env") == std::string::npos);
  CHECK(r.out.find("TORCH_CHILD_ENV_TEST=kept") != std::string::npos);
  CHECK(r.out.find("PATH=") != std::string::npos);
  set_env_passthrough({"KMCTS_CHILD_ENV_TEST_KEY"});
  r = run_sandboxed({"env"}, SandboxLimits{});
  CHECK(r.out.find("KMCTS_CHILD_ENV_TEST_KEY=sekrit-in-env") != std::string::npos);
  set_env_passthrough({});
  {
    // A warm process: `sh` answers one line of `env` output per request line.
    WarmProcess p({"sh", "-c", "read line; env | tr '\\n' ' '; echo"}, {});
    REQUIRE(p.usable());
    const auto reply = p.request("go", 10.0);
    REQUIRE(reply.line.has_value());
    CHECK(reply.line->find("sekrit-in-env") == std::string::npos);
    CHECK(reply.line->find("TORCH_CHILD_ENV_TEST=kept") != std::string::npos);
  }
  unsetenv("KMCTS_CHILD_ENV_TEST_KEY");
  unsetenv("TORCH_CHILD_ENV_TEST");
}

TEST_CASE("confinement: a confined child is another user, has no network and cannot trace") {
  const ConfinementSupport& support = confinement_support();
  INFO("refused here: " << support.refused);
  SandboxLimits limits;
  limits.confine = true;
  // id, the interfaces it sees, and whether it may attach to its parent (the sandbox's caller).
  SandboxResult r = run_sandboxed({"sh", "-c", "id -u; cat /proc/net/dev | tail -n +3 | cut -d: -f1; "
                                               "cat /proc/$PPID/environ > /dev/null 2>&1 && echo READ-PARENT; echo end"},
                                  limits, "/");
  REQUIRE_MESSAGE(r.exited_cleanly(), r.error << r.err);
  CHECK(r.confinement.find("no_new_privs") != std::string::npos);
  CHECK(r.out.find("READ-PARENT") == std::string::npos);
  if (support.root) {
    CHECK(std::stoul(r.out) >= 2000000000ul);
    CHECK(r.confinement.find("uid " + std::to_string(std::stoul(r.out))) != std::string::npos);
  }
  if (support.net_ns) CHECK(r.out.find("eth") == std::string::npos);  // only its own loopback
  CHECK(r.out.find("end") != std::string::npos);
}

TEST_CASE("confinement: a confined script runs by its path and finds the files beside it (as hipcc does)") {
  namespace fs = std::filesystem;
  // Not under /tmp (a confined child has a private one): the real tree, seen read-only.
  const fs::path dir = fs::absolute("kmcts-script-" + std::to_string(getpid()));
  if (dir.string().rfind("/tmp/", 0) == 0) {  // a clone under /tmp: hidden by the child's private /tmp
    MESSAGE("the test folder lies under /tmp, which a confined child does not see: skipped");
    return;
  }
  fs::create_directories(dir);
  write_file_atomic(dir / "beside.txt", "found beside\n");
  write_file_atomic(dir / "tool", "#!/bin/sh\necho \"$0\"; cat \"$(dirname \"$0\")/beside.txt\"\n");
  fs::permissions(dir / "tool", fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                    fs::perms::others_read | fs::perms::others_exec);
  fs::permissions(dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                           fs::perms::others_read | fs::perms::others_exec);
  SandboxLimits limits;
  limits.confine = true;
  SandboxResult r = run_sandboxed({(dir / "tool").string()}, limits, "/");
  fs::remove_all(dir);
  REQUIRE_MESSAGE(r.exited_cleanly(), r.error << r.err);
  CHECK(r.out.find((dir / "tool").string()) != std::string::npos);  // not /dev/fd/N
  CHECK(r.out.find("found beside") != std::string::npos);
}

TEST_CASE("confinement: children that run at once have uids of their own") {
  if (!confinement_support().root) return;  // not root: each has a user namespace instead
  SandboxLimits limits;
  limits.confine = true;
  std::string first, second;
  std::thread other([&] { first = run_sandboxed({"sh", "-c", "id -u; sleep 0.5"}, limits, "/").out; });
  second = run_sandboxed({"sh", "-c", "sleep 0.2; id -u"}, limits, "/").out;
  other.join();
  REQUIRE(!first.empty());
  REQUIRE(!second.empty());
  CHECK(first != second);
}

TEST_CASE("confinement: a view of its own, read-only but for its binds, with a private /tmp and hidden folders") {
  const ConfinementSupport& support = confinement_support();
  if (!support.mount_ns) {
    MESSAGE("no mount namespace here: " << support.refused);
    return;
  }
  namespace fs = std::filesystem;
  // Not under /tmp (its private tmpfs would hide it all): the real tree, seen read-only.
  const fs::path root = fs::absolute("kmcts-view-" + std::to_string(getpid()));
  fs::create_directories(root / "rw");
  fs::create_directories(root / "ro");
  fs::create_directories(root / "hidden" / "inner");
  fs::create_directories(root / "elsewhere");
  write_file_atomic(root / "hidden" / "secret.txt", "sekrit\n");
  write_file_atomic(root / "ro" / "data.txt", "data\n");
  SandboxLimits limits;
  limits.confine = true;
  limits.max_file_bytes = 1 << 20;
  limits.hidden = {(root / "hidden").string()};
  limits.binds = {{(root / "rw").string(), (root / "rw").string(), true},
                  {(root / "ro").string(), (root / "hidden" / "inner").string(), false}};
  const std::string r = root.string();
  SandboxResult run = run_sandboxed(
      {"sh", "-c",
       "echo made > " + r + "/rw/out.txt && echo RW-OK; echo x > " + r + "/elsewhere/x.txt 2>/dev/null && echo ESCAPED; "
       "echo x > " + r + "/ro/x.txt 2>/dev/null && echo ESCAPED-RO; cat " + r + "/hidden/secret.txt 2>/dev/null; "
       "cat " + r + "/hidden/inner/data.txt; : > /tmp/kmcts-view-private-$PPID && echo TMP-OK; "
       "echo kmcts-view > /proc/self/comm && echo PROC-OK; echo end"},
      limits, "/");
  INFO(run.error << run.err);
  CHECK(run.out.find("RW-OK") != std::string::npos);
  CHECK(read_file(root / "rw" / "out.txt") == "made\n");
  CHECK(run.out.find("ESCAPED") == std::string::npos);
  CHECK_FALSE(fs::exists(root / "elsewhere" / "x.txt"));
  CHECK(run.out.find("sekrit") == std::string::npos);  // the hidden folder is empty
  CHECK(run.out.find("data") != std::string::npos);    // but what is bound into it shows
  CHECK(run.out.find("TMP-OK") != std::string::npos);  // its /tmp is its own
  CHECK(run.out.find("PROC-OK") != std::string::npos);  // /proc stays writable (the CUDA driver needs it)
  CHECK_FALSE(fs::exists("/tmp/kmcts-view-private-" + std::to_string(getpid())));
  CHECK(run.confinement.find("read-only file system, private /tmp") != std::string::npos);
  fs::remove_all(root);
}

TEST_CASE("confinement: /run is empty in a view: the host's service sockets cannot be reached") {
  const ConfinementSupport& support = confinement_support();
  if (!support.mount_ns) {
    MESSAGE("no mount namespace here: " << support.refused);
    return;
  }
  const std::string path = "/run/kmcts-view-" + std::to_string(getpid()) + ".sock";
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::snprintf(address.sun_path, sizeof address.sun_path, "%s", path.c_str());
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    MESSAGE("cannot make a socket in /run here (not root)");
    if (fd >= 0) close(fd);
    return;
  }
  for (const bool keep_uid : {false, true}) {  // keep_uid: kmcts's uid, as the KernelBench harness
    CAPTURE(keep_uid);
    SandboxLimits limits;
    limits.confine = true;
    limits.keep_uid = keep_uid;
    const SandboxResult r = run_sandboxed({"sh", "-c", "[ -S " + path + " ] && echo VISIBLE; echo end"}, limits, "/");
    INFO(r.error << r.err);
    CHECK(r.out == "end\n");
  }
  close(fd);
  unlink(path.c_str());
}
