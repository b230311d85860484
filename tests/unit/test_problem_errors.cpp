// A bad problem folder is an InputError that names the file and the culprit.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "core/problem.hpp"

using namespace kmcts;
namespace fs = std::filesystem;

namespace {

struct Folder {
  fs::path dir = fs::temp_directory_path() / ("kmcts-problem-" + std::to_string(::getpid()));
  Folder() {
    fs::remove_all(dir);
    fs::create_directories(dir);
    write("reference.cpp", "// reference");
    write("seed.cpp", "// seed");
  }
  ~Folder() { fs::remove_all(dir); }
  void write(const std::string& name, const std::string& text) const { std::ofstream(dir / name) << text; }
  std::string error() const {
    try {
      load_problem(dir);
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  }
};

const char* kValid = R"({"name": "p", "inputs": [{"name": "x", "shape": [4]}], "outputs": [{"name": "y", "shape": [4]}],
                         "reference": "reference.cpp", "seed": "seed.cpp"})";

}  // namespace

TEST_CASE("problem errors: each names the file and the culprit") {
  Folder f;
  f.write("problem.json", kValid);
  CHECK(f.error() == "no error");

  f.write("problem.json", "{\"name\": ");
  CHECK(f.error().find("problem.json: not valid JSON") != std::string::npos);

  f.write("problem.json", R"({"inputs": [], "outputs": []})");
  CHECK(f.error().find("missing key 'name'") != std::string::npos);

  f.write("problem.json", R"({"name": "p", "inputs": [{"name": "x", "dtype": "f16", "shape": [4]}],
                              "outputs": [{"name": "y", "shape": [4]}], "reference": "reference.cpp", "seed": "seed.cpp"})");
  CHECK(f.error().find("tensor 'x'): dtype 'f16' is not supported") != std::string::npos);

  f.write("problem.json", R"({"name": "p", "inputs": [{"name": "x", "shape": [0]}],
                              "outputs": [{"name": "y", "shape": [4]}], "reference": "reference.cpp", "seed": "seed.cpp"})");
  CHECK(f.error().find("shape dimensions must be positive") != std::string::npos);

  f.write("problem.json", R"({"name": "p", "inputs": [{"name": "x", "shape": [4], "distributions": ["zeros"]}],
                              "outputs": [{"name": "y", "shape": [4]}], "reference": "reference.cpp", "seed": "seed.cpp"})");
  CHECK(f.error().find("unknown distribution 'zeros'") != std::string::npos);

  f.write("problem.json", R"({"name": "p", "inputs": [{"name": "x", "shape": [4]}], "outputs": [{"name": "y", "shape": [4]}],
                              "reference": "missing.cpp", "seed": "seed.cpp"})");
  CHECK(f.error().find("missing.cpp") != std::string::npos);

  f.write("problem.json", R"({"name": "p", "inputs": [{"name": "x", "shape": [4]}], "outputs": [{"name": "y", "shape": [4]}],
                              "reference": "reference.cpp", "template": "seed.cpp"})");
  CHECK(f.error().find("'template' and 'space' go together") != std::string::npos);

  f.write("problem.json", R"({"name": "p", "inputs": [{"name": "x", "shape": [4]}], "outputs": [{"name": "y", "shape": [4]}],
                              "reference": "reference.cpp"})");
  CHECK(f.error().find("needs a 'seed' kernel or a 'template'") != std::string::npos);

  fs::remove(f.dir / "problem.json");
  CHECK(f.error().find("no problem.json") != std::string::npos);
}
