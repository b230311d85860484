#include "hardware/confine_exec.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/install_paths.hpp"

namespace kmcts {

namespace fs = std::filesystem;
using nlohmann::json;

std::string confine_argument(const SandboxLimits& limits) {
  json binds = json::array();
  for (const Bind& b : limits.binds) binds.push_back({{"source", b.source}, {"target", b.target}, {"writable", b.writable}});
  return json{{"keep_uid", limits.keep_uid},     {"shared_uid", limits.shared_uid}, {"build", limits.build},
              {"binds", binds},                  {"hidden", limits.hidden},
              {"tmpfs_options", limits.tmpfs_options}, {"max_file_bytes", limits.max_file_bytes},
              {"max_processes", limits.max_processes ? limits.max_processes : confinement_max_processes()}}
      .dump();
}

SandboxLimits limits_from_argument(const std::string& text) {
  try {
    const json j = json::parse(text);
    SandboxLimits limits;
    limits.confine = true;
    limits.keep_uid = j.at("keep_uid").get<bool>();
    limits.shared_uid = j.value("shared_uid", uid_t{0});
    limits.build = j.at("build").get<bool>();
    for (const json& b : j.at("binds"))
      limits.binds.push_back({b.at("source").get<std::string>(), b.at("target").get<std::string>(), b.at("writable").get<bool>()});
    limits.hidden = j.at("hidden").get<std::vector<std::string>>();
    limits.tmpfs_options = j.at("tmpfs_options").get<std::string>();
    limits.max_file_bytes = j.at("max_file_bytes").get<uint64_t>();
    limits.max_processes = j.at("max_processes").get<uint64_t>();
    return limits;
  } catch (const json::exception& e) {
    throw std::invalid_argument(std::string("bad confinement argument: ") + e.what());
  }
}

std::vector<std::string> confined_argv(const SandboxLimits& limits, const std::vector<std::string>& argv,
                                       std::string* why) {
  auto unchanged = [&](const std::string& reason) {
    if (why) *why = reason;
    return argv;
  };
  if (!confinement_enabled()) return unchanged("evaluator.confine=false");
  const fs::path launcher = executable_dir() / "kmcts-confine";
  std::error_code ec;
  if (!fs::exists(launcher, ec)) return unchanged("kmcts-confine is missing next to kmcts (" + launcher.string() + ")");
  SandboxLimits keep = limits;
  keep.keep_uid = keep.shared_uid == 0;
  std::vector<std::string> out = {launcher.string(), confine_argument(keep)};
  out.insert(out.end(), argv.begin(), argv.end());
  if (why) why->clear();
  return out;
}

int confine_exec_main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: kmcts-confine LIMITS_JSON PROGRAM [ARGS...]\n");
    return 2;
  }
  SandboxLimits limits;
  try {
    limits = limits_from_argument(argv[1]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kmcts-confine: %s\n", e.what());
    return 2;
  }
  if (!limits.keep_uid && limits.shared_uid == 0) {
    std::fprintf(stderr, "kmcts-confine: only keep_uid or shared_uid confinement runs in place (a uid of its own needs kmcts's lease)\n");
    return 2;
  }
  const ConfinementPlan plan = confinement_for(limits, geteuid());
  const char* step = "";
  if (int err = apply_confinement(plan, &step); err != 0) {
    std::fprintf(stderr, "kmcts-confine: %s: %s\n", step, std::strerror(err));
    return 126;
  }
  if (int err = load_seccomp(plan); err != 0) {
    std::fprintf(stderr, "kmcts-confine: seccomp: %s\n", std::strerror(err));
    return 126;
  }
  execvp(argv[2], argv + 2);
  std::fprintf(stderr, "kmcts-confine: cannot run '%s': %s\n", argv[2], std::strerror(errno));
  return 126;
}

}  // namespace kmcts
