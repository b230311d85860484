// KernelBench-format problems: one Python file (Model, get_inputs, get_init_inputs) instead of
// a folder with problem.json. The kernelbench evaluator runs them; agents see the file.
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/problem.hpp"

namespace kmcts {

namespace fs = std::filesystem;

std::string kernelbench_seed_source(const std::string& reference) {
  // The root of a search is the reference module as it is, with ModelNew a subclass of its
  // Model: the real files call super(Model, self).__init__() (245 of KernelBench's 250) and
  // read their own module-level names, so renaming the class would break them. Agents rewrite
  // this file with kernels of their own.
  std::string seed = reference;
  if (!seed.empty() && seed.back() != '\n') seed += '\n';
  seed +=
      "\n\n# kmcts seed: the reference itself, as ModelNew.\n"
      "class ModelNew(Model):\n"
      "    \"\"\"The reference Model unchanged (the search's root).\"\"\"\n";
  return seed;
}

bool is_kernelbench_file(const fs::path& path) { return path.extension() == ".py" && fs::is_regular_file(path); }

Problem load_kernelbench_problem(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(fmt::format("KernelBench problem '{}' cannot be read", file.string()));
  std::ostringstream text;
  text << in.rdbuf();
  Problem p;
  p.reference_source = text.str();
  for (const char* needed : {"class Model(", "def get_inputs(", "def get_init_inputs("})
    if (p.reference_source.find(needed) == std::string::npos)
      throw InputError(fmt::format("{}: not a KernelBench-format problem (no '{}'; it needs class Model, get_inputs "
                                   "and get_init_inputs)",
                                   file.string(), needed));
  p.dir = fs::absolute(file).parent_path();
  p.name = file.stem().string();
  p.kind = "kernelbench";
  p.description = fmt::format("KernelBench-format problem {}", file.filename().string());
  p.raw = {{"kernelbench_file", fs::absolute(file).string()}};
  p.seed_source = kernelbench_seed_source(p.reference_source);
  return p;
}

}  // namespace kmcts
