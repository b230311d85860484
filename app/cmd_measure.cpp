// `kmcts measure PROBLEM_DIR [SOURCE...]`: one evaluation outside any search, by the same
// evaluator a search would use: build each source (default: the problem's seed), measure it
// --repeat times against the reference, print one line per measurement, and with --jsonl
// write each result in full (raw samples included). Used for A/A tests, the cheat suite and
// bench/measure; useful to check a hand-written kernel.
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "app/commands.hpp"
#include "core/error.hpp"
#include "core/problem.hpp"
#include "hardware/evaluator.hpp"

namespace kmcts::app {
namespace {

struct MeasureArgs {
  std::string problem_dir;
  std::vector<std::string> sources;
  std::string config_file;
  std::vector<std::string> sets;
  std::optional<std::string> gpus;
  int repeat = 1;
  std::string jsonl;
};

std::string read_source(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("cannot read the source '{}'", path));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

int measure(const MeasureArgs& a) {
  Config config = a.config_file.empty() ? Config() : Config::from_file(a.config_file);
  for (const auto& s : a.sets) config.set(s);
  if (a.gpus) config.set_value("evaluator.cuda.gpus", *a.gpus, "--gpus");
  const Problem problem = load_problem(a.problem_dir);
  std::vector<std::pair<std::string, std::string>> sources;  // label, text
  if (a.sources.empty()) sources.emplace_back("seed", problem.seed_source);
  for (const auto& path : a.sources) sources.emplace_back(path, read_source(path));
  std::ofstream jsonl;
  if (!a.jsonl.empty()) {
    jsonl.open(a.jsonl, std::ios::app);
    if (!jsonl) throw InputError(fmt::format("--jsonl: cannot write '{}'", a.jsonl));
  }
  auto evaluator = make_evaluator(problem, config);
  int failed = 0;  // measurements whose verdict is not ok: the command exits 1 (README's table)
  for (const auto& [label, text] : sources) {
    const BuildResult built = evaluator->build(text);
    for (int k = 0; k < a.repeat; ++k) {
      EvalResult r = built.ok ? evaluator->measure_built(built) : compile_error_result(built);
      fmt::print("{} [{}/{}] {}\n", label, k + 1, a.repeat, r.message);
      if (!r.ok()) ++failed;
      std::fflush(stdout);
      if (jsonl.is_open()) {
        nlohmann::json line = to_json(r, true);
        line["source"] = label;
        line["repeat"] = k;
        line["build"] = {{"ok", built.ok}, {"seconds", built.seconds}, {"cached", built.cached}, {"resources", built.resources}};
        jsonl << line.dump() << '\n' << std::flush;
      }
      if (!built.ok) break;
    }
  }
  if (failed > 0) fmt::print(stderr, "kmcts measure: {} measurement(s) did not pass\n", failed);
  return failed > 0 ? 1 : 0;
}

}  // namespace

Command add_measure(CLI::App& root) {
  auto args = std::make_shared<MeasureArgs>();
  CLI::App* cmd = root.add_subcommand("measure", "Evaluate kernel sources against a problem's reference, outside any search");
  cmd->add_option("PROBLEM_DIR", args->problem_dir, "Problem folder (holds problem.json)")->required();
  cmd->add_option("SOURCE", args->sources, "Kernel source files (default: the problem's seed)");
  cmd->add_option("--config", args->config_file, "JSON config file (see `kmcts config --explain`)");
  cmd->add_option("--set", args->sets, "Override one option: key=value (repeatable)");
  cmd->add_option("--gpus", args->gpus, "CUDA devices to measure on, e.g. 0,1 (evaluator.cuda.gpus)");
  cmd->add_option("--repeat", args->repeat, "Measurements per source, each in a fresh worker")->check(CLI::Range(1, 100000));
  cmd->add_option("--jsonl", args->jsonl, "Append each result (raw samples included) as a JSON line to this file");
  return [args] { return measure(*args); };
}

}  // namespace kmcts::app
