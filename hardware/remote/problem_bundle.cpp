#include "hardware/remote/problem_bundle.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/hash.hpp"

namespace kmcts::remote {

namespace fs = std::filesystem;
using json = nlohmann::json;

ProblemBundle bundle_problem(const Problem& problem, const Config& config, size_t max_bytes) {
  ProblemBundle b;
  json files = json::object();
  std::string entry = ".";
  auto add = [&](const fs::path& file, const std::string& name) {
    std::string text = read_file(file);
    b.bytes += text.size();
    if (b.bytes > max_bytes)
      throw InputError(fmt::format("problem '{}': its files are over {} bytes, too large to send to the MPI workers "
                                   "(--mpi-max-message-mb)",
                                   problem.name, max_bytes));
    files[name] = std::move(text);
  };
  if (problem.raw.contains("kernelbench_file")) {
    const fs::path file = problem.raw["kernelbench_file"].get<std::string>();
    entry = file.filename().string();
    add(file, entry);
  } else {
    for (auto it = fs::recursive_directory_iterator(problem.dir); it != fs::recursive_directory_iterator(); ++it) {
      const std::string name = it->path().filename().string();
      if (it->is_directory() && !name.empty() && name[0] == '.') it.disable_recursion_pending();  // .git, caches
      if (it->is_regular_file()) add(it->path(), fs::relative(it->path(), problem.dir).generic_string());
    }
  }
  // Evaluators read evaluator.* only: runs that differ elsewhere (seed, policy) share a bundle,
  // so a worker keeps one evaluator (and its warm processes) for all of them.
  json settings = json::object();
  if (json all = config.to_json(); all.contains("evaluator")) settings["evaluator"] = all["evaluator"];
  json message{{"name", problem.name}, {"entry", entry}, {"files", std::move(files)}, {"config", std::move(settings)}};
  b.key = sha256_hex(message.dump());
  message["key"] = b.key;
  b.message = std::move(message);
  return b;
}

fs::path materialize(const json& m, const fs::path& root) {
  const std::string key = m.at("key").get<std::string>();
  if (key.empty() || key.find_first_not_of("0123456789abcdef") != std::string::npos)
    throw std::runtime_error(fmt::format("problem key '{}' is not a hex digest", key.substr(0, 80)));
  const fs::path dir = root / key;
  auto inside = [&](const std::string& name) {
    fs::path p = fs::path(name).lexically_normal();
    if (name.empty() || p.is_absolute() || p.empty() || *p.begin() == "..")
      throw std::runtime_error(fmt::format("problem '{}': file name '{}' leaves its folder", key, name));
    return dir / p;
  };
  for (const auto& [name, text] : m.at("files").items()) {
    if (!text.is_string()) throw std::runtime_error(fmt::format("problem '{}': file '{}' is not text", key, name));
    const fs::path file = inside(name);
    fs::create_directories(file.parent_path());
    write_file_atomic(file, text.get<std::string>());
  }
  const std::string entry = m.at("entry").get<std::string>();
  return entry == "." ? dir : inside(entry);
}

}  // namespace kmcts::remote
