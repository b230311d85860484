// The message rules of `--mpi` (hardware/remote/messages.hpp) and problem bundles
// (problem_bundle.hpp): what a rank may send, and what a bundle may write on a worker.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "core/error.hpp"
#include "core/files.hpp"
#include "hardware/remote/messages.hpp"
#include "hardware/remote/problem_bundle.hpp"
#include "scratch.hpp"

using namespace kmcts;
using namespace kmcts::remote;
namespace fs = std::filesystem;

namespace {

std::string error_of(int tag, const std::string& payload, size_t max_bytes = 1000) {
  try {
    decode(3, tag, payload, max_bytes);
  } catch (const MessageError& e) {
    return e.what();
  }
  return "";
}

const int kResult = static_cast<int>(Tag::result);

}  // namespace

TEST_CASE("a well-formed result is decoded with its sender and kind") {
  Message m = decode(2, kResult, R"({"id": 7, "result": {"verdict": "ok"}, "device": 1, "busy_s": 0.5})", 1000);
  CHECK(m.source == 2);
  CHECK(m.tag == Tag::result);
  CHECK(m.body["id"] == 7);
}

TEST_CASE("bad messages are rejected with the sender, the kind and the fault named") {
  CHECK(error_of(kResult, "{not json") .find("MPI message from rank 3 (tag 105 'result') rejected: not JSON") == 0);
  CHECK(error_of(kResult, "[1, 2]") == "MPI message from rank 3 (tag 105 'result') rejected: the payload is not a JSON object");
  CHECK(error_of(kResult, R"({"id": 7, "device": 0, "busy_s": 1})") ==
        "MPI message from rank 3 (tag 105 'result') rejected: no 'result'");
  CHECK(error_of(kResult, R"({"id": -1, "result": {}, "device": 0, "busy_s": 1})") ==
        "MPI message from rank 3 (tag 105 'result') rejected: 'id' is not a non-negative integer");
  CHECK(error_of(kResult, R"({"id": 1, "result": {}, "device": 0, "busy_s": "slow"})") ==
        "MPI message from rank 3 (tag 105 'result') rejected: 'busy_s' is not a number");
  CHECK(error_of(4242, "{}") == "MPI message from rank 3 (tag 4242 'unknown') rejected: no message kind has this tag");
  CHECK(error_of(kResult, std::string(2000, ' ')) ==
        "MPI message from rank 3 (tag 105 'result') rejected: 2000 bytes, over the limit of 1000 (--mpi-max-message-mb)");
  // Numbers out of double's range, deep nesting and absurd sizes (rank 0 allocates by them).
  CHECK(error_of(kResult, R"({"id": 1e999})").find("rejected: not JSON") != std::string::npos);
  std::string deep = std::string(100, '[') + std::string(100, ']');
  CHECK(error_of(kResult, R"({"id": 1, "result": {}, "device": 0, "busy_s": 1, "x": )" + deep + "}") ==
        "MPI message from rank 3 (tag 105 'result') rejected: nested deeper than 64 levels");
  CHECK(error_of(static_cast<int>(Tag::hello), R"({"version": "1", "host": "h", "pid": 1, "gpu_ids": "", "gpus": 2147483647})",
                 1000) == "MPI message from rank 3 (tag 101 'hello') rejected: 'gpus' is over 4096");
  CHECK(error_of(kResult, R"({"id": 1, "result": {}, "device": 0, "busy_s": -2})") ==
        "MPI message from rank 3 (tag 105 'result') rejected: 'busy_s' is negative");
  try {
    decode(5, 4242, "{}", 10);
  } catch (const MessageError& e) {
    CHECK(e.source == 5);  // rank 0 counts rejections per sender
  }
  // Kinds without fields still need an object.
  CHECK(error_of(static_cast<int>(Tag::heartbeat), "{}").empty());
  CHECK(!error_of(static_cast<int>(Tag::heartbeat), "3").empty());
}

TEST_CASE("a problem bundle carries the folder and the evaluator options, keyed by both") {
  const fs::path dir = test::fresh_dir("bundle");
  fs::create_directories(dir / "sub");
  fs::create_directories(dir / ".git");
  write_file_atomic(dir / "problem.json", "{}");
  write_file_atomic(dir / "sub" / "seed.c", "int x;");
  write_file_atomic(dir / ".git" / "HEAD", "ref");
  Problem p;
  p.dir = dir;
  p.name = "demo";
  Config c;
  ProblemBundle b = bundle_problem(p, c, 1 << 20);
  CHECK(b.message["files"].size() == 2);  // .git is left out
  CHECK(b.message["files"]["sub/seed.c"] == "int x;");
  CHECK(b.message["config"].contains("evaluator"));
  CHECK(!b.message["config"].contains("search"));  // a worker's evaluator reads evaluator.* only
  Config seeded;
  seeded.set("search.seed=9");
  CHECK(bundle_problem(p, seeded, 1 << 20).key == b.key);  // runs that differ in the search share it
  Config other;
  other.set("evaluator.input_seed=5");
  CHECK(bundle_problem(p, other, 1 << 20).key != b.key);
  CHECK_THROWS_WITH_AS(bundle_problem(p, c, 4), doctest::Contains("too large to send"), InputError);

  // On the worker: written under root/<key>/ and loaded from there.
  const fs::path root = dir / "worker";
  const fs::path entry = materialize(b.message, root);
  CHECK(entry == root / b.key);
  CHECK(read_file(entry / "sub" / "seed.c") == "int x;");
  fs::remove_all(dir);
}

TEST_CASE("a bundle cannot write outside its folder on the worker") {
  const fs::path root = test::fresh_dir("bundle-escape");
  nlohmann::json m{{"key", "ab12"}, {"entry", "."}, {"files", {{"../evil", "x"}}}};
  CHECK_THROWS_WITH(materialize(m, root), doctest::Contains("leaves its folder"));
  m["files"] = {{"/etc/evil", "x"}};
  CHECK_THROWS_WITH(materialize(m, root), doctest::Contains("leaves its folder"));
  m["files"] = {{"ok.txt", "x"}};
  m["key"] = "../up";
  CHECK_THROWS_WITH(materialize(m, root), doctest::Contains("is not a hex digest"));
  m["key"] = "ab12";
  m["entry"] = "../../x.py";
  CHECK_THROWS_WITH(materialize(m, root), doctest::Contains("leaves its folder"));
  CHECK(!fs::exists(root.parent_path() / "evil"));
  fs::remove_all(root);
}
