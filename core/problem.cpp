#include "core/problem.hpp"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/error.hpp"

namespace kmcts {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

std::string read_text(const fs::path& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot read {} '{}'", path.parent_path().string(), what, path.string()));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

json read_json(const fs::path& path) {
  std::string text = read_text(path, "file");
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    throw InputError(fmt::format("{}: not valid JSON: {}", path.string(), e.what()));
  }
}

template <class T>
T get_field(const json& j, const std::string& key, const std::string& where) {
  if (!j.contains(key)) throw InputError(fmt::format("{}: missing key '{}'", where, key));
  try {
    return j.at(key).get<T>();
  } catch (const json::exception&) {
    throw InputError(fmt::format("{}: key '{}' has the wrong type ({})", where, key, j.at(key).dump()));
  }
}

/// get_field for keys that may be absent (then T{}).
template <class T>
T get_optional(const json& j, const std::string& key, const std::string& where) {
  return j.contains(key) ? get_field<T>(j, key, where) : T{};
}

const std::vector<std::string> kDistributions = {"uniform", "normal", "negative", "heavy_tailed"};

TensorSpec parse_tensor(const json& j, const std::string& where, bool is_input) {
  if (!j.is_object()) throw InputError(where + ": each tensor must be an object");
  TensorSpec t;
  t.name = get_field<std::string>(j, "name", where);
  std::string at = fmt::format("{} (tensor '{}')", where, t.name);
  t.dtype = j.value("dtype", std::string("f32"));
  if (t.dtype != "f32" && t.dtype != "f64")
    throw InputError(fmt::format("{}: dtype '{}' is not supported (f32, f64)", at, t.dtype));
  t.shape = get_field<std::vector<int64_t>>(j, "shape", at);
  if (t.shape.empty() || t.shape.size() > 8) throw InputError(at + ": shape must have 1 to 8 dimensions");
  for (int64_t d : t.shape)
    if (d <= 0) throw InputError(fmt::format("{}: shape dimensions must be positive", at));
  if (is_input) {
    t.distributions = j.value("distributions", kDistributions);
    if (t.distributions.empty()) throw InputError(at + ": 'distributions' must not be empty");
    for (const auto& d : t.distributions)
      if (std::find(kDistributions.begin(), kDistributions.end(), d) == kDistributions.end())
        throw InputError(fmt::format("{}: unknown distribution '{}' (known: {})", at, d, fmt::join(kDistributions, ", ")));
  }
  return t;
}

std::vector<TensorSpec> parse_tensors(const json& j, const std::string& key, const std::string& where, bool inputs) {
  if (!j.contains(key) || !j.at(key).is_array() || j.at(key).empty())
    throw InputError(fmt::format("{}: '{}' must be a non-empty array", where, key));
  std::vector<TensorSpec> out;
  for (const auto& t : j.at(key)) out.push_back(parse_tensor(t, where, inputs));
  return out;
}

}  // namespace

int64_t TensorSpec::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Problem load_problem(const fs::path& dir) {
  if (dir.extension() == ".py") {
    if (!is_kernelbench_file(dir))
      throw InputError(fmt::format("KernelBench problem file '{}' does not exist", dir.string()));
    return load_kernelbench_problem(dir);
  }
  if (!fs::is_directory(dir)) throw InputError(fmt::format("problem folder '{}' does not exist", dir.string()));
  fs::path manifest = dir / "problem.json";
  if (!fs::exists(manifest)) throw InputError(fmt::format("{}: no problem.json in the problem folder", dir.string()));
  const std::string where = manifest.string();
  Problem p;
  p.dir = fs::absolute(dir);
  p.raw = read_json(manifest);
  if (!p.raw.is_object()) throw InputError(where + ": must be a JSON object");
  p.name = get_field<std::string>(p.raw, "name", where);
  p.kind = p.raw.value("kind", std::string("cpu"));
  if (p.kind != "cpu" && p.kind != "cuda" && p.kind != "hip")
    throw InputError(fmt::format("{}: kind '{}' is not known (cpu, cuda, hip)", where, p.kind));
  p.description = p.raw.value("description", std::string());
  p.inputs = parse_tensors(p.raw, "inputs", where, true);
  p.outputs = parse_tensors(p.raw, "outputs", where, false);
  if (p.raw.contains("tolerance")) {
    const json& tol = p.raw.at("tolerance");
    p.atol = tol.value("atol", p.atol);
    p.rtol = tol.value("rtol", p.rtol);
    if (p.atol < 0 || p.rtol < 0) throw InputError(where + ": tolerance must be non-negative");
  }
  p.compile_flags = get_optional<std::vector<std::string>>(p.raw, "compile_flags", where);
  p.reference_flags = get_optional<std::vector<std::string>>(p.raw, "reference_flags", where);
  p.flops = p.raw.value("flops", 0.0);
  p.bytes = p.raw.value("bytes", 0.0);
  p.reference_source = read_text(dir / get_field<std::string>(p.raw, "reference", where), "reference");

  if (p.raw.contains("space") != p.raw.contains("template"))
    throw InputError(where + ": 'template' and 'space' go together");
  if (p.raw.contains("template")) {
    p.template_source = read_text(dir / get_field<std::string>(p.raw, "template", where), "template");
    fs::path space_path = dir / get_field<std::string>(p.raw, "space", where);
    p.space = TunableSpace::from_json(read_json(space_path), space_path.string());
  }
  if (p.raw.contains("seed")) {
    p.seed_source = read_text(dir / get_field<std::string>(p.raw, "seed", where), "seed kernel");
  } else if (p.template_source) {
    p.seed_source = p.space->render(*p.template_source, p.space->default_point());
    p.seed_meta = {{"params", TunableSpace::to_json(p.space->default_point())}};
  } else {
    throw InputError(where + ": needs a 'seed' kernel or a 'template' with a 'space'");
  }
  return p;
}

}  // namespace kmcts
