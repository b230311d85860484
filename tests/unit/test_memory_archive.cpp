// The optimisation archive (search/memory_archive.hpp): entries stored once per parent, child and
// hardware; listed, fetched, ranked by relevance; JSON both ways with errors that name the field;
// the operator signature of a problem.
#include <doctest/doctest.h>

#include <filesystem>

#include "core/error.hpp"
#include "search/detail/sqlite.hpp"
#include "search/memory_archive.hpp"
#include "tests/unit/scratch.hpp"

using namespace kmcts;
namespace fs = std::filesystem;

namespace {

MemoryEntry entry(const std::string& child, const std::string& signature, const std::string& hardware, double child_ns) {
  MemoryEntry e;
  e.problem = signature.substr(0, signature.find('|'));
  e.kind = "cuda";
  e.signature = signature;
  e.hardware = hardware;
  e.plan = "tile " + child;
  e.parent_hash = "p";
  e.child_hash = child;
  e.parent_source = "parent";
  e.child_source = "child " + child;
  e.parent_ns = 1000;
  e.child_ns = child_ns;
  return e;
}

}  // namespace

TEST_CASE("memory archive: stores an improvement once, and keeps it across openings") {
  const fs::path dir = test::fresh_dir("memory");
  {
    MemoryArchive archive(dir / "sub" / "memory.sqlite");  // its folder is made
    CHECK(archive.add(entry("a", "relu|2^24", "NVIDIA H200", 500)));
    CHECK_FALSE(archive.add(entry("a", "relu|2^24", "NVIDIA H200", 400)));  // same parent, child, hardware
    CHECK(archive.add(entry("a", "relu|2^24", "NVIDIA A100", 400)));        // another GPU's measurement
  }
  MemoryArchive again(dir / "sub" / "memory.sqlite");
  const auto all = again.list();
  REQUIRE(all.size() == 2);
  CHECK(all[0].id == 1);
  CHECK(all[0].speedup() == doctest::Approx(2.0));
  CHECK(all[0].child_source == "child a");
  CHECK_FALSE(all[0].created_at.empty());
  CHECK(again.get(2)->hardware == "NVIDIA A100");
  CHECK_FALSE(again.get(3).has_value());
  fs::remove_all(dir);
}

TEST_CASE("memory archive: relevance ranks the operator, then the size class, then the hardware") {
  const fs::path dir = test::fresh_dir("memory-rank");
  MemoryArchive archive(dir / "m.sqlite");
  archive.add(entry("other-op", "softmax|2^24", "NVIDIA H200", 100));      // 10x, another operator
  archive.add(entry("same-op-other-size", "relu|2^20", "NVIDIA H200", 800));
  archive.add(entry("same-all", "relu|2^24", "NVIDIA H200", 900));
  archive.add(entry("same-size-other-gpu", "relu|2^24", "NVIDIA A100", 700));
  MemoryEntry cpu = entry("cpu", "relu|2^24", "NVIDIA H200", 100);
  cpu.kind = "cpu";
  archive.add(cpu);
  const auto found = archive.relevant("cuda", "relu|2^24", "NVIDIA H200", 3);
  REQUIRE(found.size() == 3);
  CHECK(found[0].child_hash == "same-all");
  CHECK(found[1].child_hash == "same-size-other-gpu");
  CHECK(found[2].child_hash == "same-op-other-size");
  CHECK(archive.relevant("cuda", "relu|2^24", "NVIDIA H200", 10).size() == 4);  // never another kind
  fs::remove_all(dir);
}

TEST_CASE("memory archive: JSON both ways, and a bad entry names its field") {
  const MemoryEntry e = entry("a", "relu|2^24", "NVIDIA H200", 250);
  const MemoryEntry back = memory_entry_from_json(to_json(e));
  CHECK(back.child_source == e.child_source);
  CHECK(back.speedup() == doctest::Approx(4.0));
  nlohmann::json bad = to_json(e);
  bad.erase("hardware");
  CHECK_THROWS_WITH_AS(memory_entry_from_json(bad), "a memory entry lacks \"hardware\"", InputError);
  bad = to_json(e);
  bad["child_ns"] = -1;
  CHECK_THROWS_WITH_AS(memory_entry_from_json(bad), "a memory entry's \"child_ns\" is not a positive number",
                       InputError);
  CHECK_THROWS_AS(memory_entry_from_json(nlohmann::json::array()), InputError);
}

TEST_CASE("memory archive: a problem's operator signature") {
  Problem p;
  p.name = "19_ReLU";
  CHECK(operator_signature(p) == "relu|");  // a KernelBench file declares no tensors
  p.name = "matmul";
  TensorSpec a, b;
  a.shape = {192, 192};
  b.shape = {192, 192};
  p.inputs = {a, b};
  CHECK(operator_signature(p) == "matmul|2^16");  // 73728 elements
}

TEST_CASE("memory archive: entries keep the profiles before and after, and the lines a Planner reads name them") {
  const fs::path dir = test::fresh_dir("memory-profiles");
  const fs::path file = dir / "memory.sqlite";
  fs::create_directories(dir);
  {
    // An archive written before entries carried profiles: opened, it gains the columns.
    detail::Database old(file, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    old.exec("CREATE TABLE entries (id INTEGER PRIMARY KEY, created_at TEXT, run TEXT, problem TEXT, kind TEXT NOT NULL, "
             "signature TEXT, hardware TEXT NOT NULL, plan TEXT, parent_hash TEXT NOT NULL, child_hash TEXT NOT NULL, "
             "parent_source TEXT, child_source TEXT, parent_ns REAL, child_ns REAL, interval TEXT, "
             "UNIQUE (parent_hash, child_hash, hardware));"
             "INSERT INTO entries (kind, hardware, parent_hash, child_hash, parent_ns, child_ns, problem, signature, plan) "
             "VALUES ('cuda', 'NVIDIA H200', 'p0', 'c0', 2000, 1000, 'relu', 'relu|2^24', 'an old improvement');");
  }
  MemoryArchive archive(file);
  REQUIRE(archive.list().size() == 1);
  CHECK(archive.list()[0].profiles.is_null());
  CHECK(archive.list()[0].bottleneck.empty());
  MemoryEntry e = entry("a", "relu|2^24", "NVIDIA H200", 250);
  e.bottleneck = "memory-bound";
  e.profiles = {{"before", {{{"name", "relu_naive(float const*, float*, int)"}, {"share", 1.0}, {"mean_ns", 1000.0}}}},
                {"after", {{{"name", "relu_vec4(float4 const*, float4*, int)"}, {"share", 0.97}, {"mean_ns", 240.0}}}}};
  REQUIRE(archive.add(e));
  const MemoryEntry back = *archive.get(2);
  CHECK(back.bottleneck == "memory-bound");
  CHECK(back.profiles == e.profiles);
  CHECK(memory_entry_from_json(to_json(back)).profiles == e.profiles);
  Config c;
  c.set_value("agents.memory.path", file.string(), "test");
  Problem relu;
  relu.name = "relu";
  relu.kind = "cuda";
  const std::string lines = memory_for(relu, c)["memory_prompt"].get<std::string>();
  CHECK(lines.find("4.00x faster than its parent (1 us -> 250 ns); the parent was memory-bound; main kernel "
                   "relu_naive(float const*, float*, int) (100% of its time) -> relu_vec4(float4 const*, float4*, int) (97%)\n") !=
        std::string::npos);
  CHECK(lines.find("\"an old improvement\" on relu (relu|2^24, NVIDIA H200): 2.00x faster than its parent (2 us -> 1 us)\n") !=
        std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("memory: once the seed is measured, its hardware and bottleneck verdict rank the kept candidates") {
  const fs::path dir = kmcts::test::fresh_dir("memory-after-seed");
  const fs::path file = dir / "memory.sqlite";
  MemoryArchive archive(file);
  // Same operator and size class for all four; they differ in hardware and the parent's verdict.
  auto add = [&](const char* child, const char* hardware, const char* verdict, double child_ns) {
    MemoryEntry e = entry(child, "relu|2^24", hardware, child_ns);
    e.plan = std::string("plan ") + child;
    e.bottleneck = verdict;
    REQUIRE(archive.add(e));
  };
  add("a", "NVIDIA H100", "compute-bound", 100);          // the largest gain: first by the archive's order
  add("b", "NVIDIA H200", "compute-bound", 200);
  add("c", "NVIDIA H100", "memory-bound", 300);
  add("d", "NVIDIA H200", "memory-bound", 400);
  Config c;
  c.set_value("agents.memory.path", file.string(), "test");
  c.set("agents.memory.k=2");
  Problem relu;
  relu.name = "relu";
  relu.kind = "cuda";
  const nlohmann::json memory = memory_for(relu, c);
  REQUIRE(memory["memory_candidates"].size() == 4);  // up to 4k kept
  CHECK(memory["memory_k"] == 2);
  auto order = [](const std::string& lines) {
    std::string out;
    for (size_t p = 0; (p = lines.find("\"plan ", p)) != std::string::npos; p += 6) out += lines[p + 6];
    return out;
  };
  CHECK(order(memory["memory_prompt"]) == "ab");  // before anything is measured: the largest gains
  // The seed measured on an H200, its main kernel memory-bound: the verdict counts more than the hardware.
  const nlohmann::json seed = {{"device", {{"name", "NVIDIA H200"}}},
                               {"hw_counters", {{"kernels", {{{"name", "relu"}, {"bottleneck_kind", "memory-bound"}}}}}}};
  CHECK(order(memory_prompt_after_seed(memory, seed)) == "dc");
  // Measured on an H200 without ncu: the H200's entries first.
  CHECK(order(memory_prompt_after_seed(memory, {{"device", {{"name", "NVIDIA H200"}}}})) == "bd");
  // A run made before candidates were kept reads its lines as they are.
  CHECK(memory_prompt_after_seed({{"memory_prompt", "- old line\n"}}, seed) == "- old line\n");
  CHECK(memory_prompt_after_seed(nlohmann::json::object(), seed).empty());
  fs::remove_all(dir);
}
