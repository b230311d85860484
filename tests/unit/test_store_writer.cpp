// The run store's writer thread: batches are atomic, a failed write undoes its own batch
// only and is reported on the caller's thread, muted writes vanish, and stopping commits
// whole batches and drops a half-written one.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>

#include "core/error.hpp"
#include "core/hash.hpp"
#include "scratch.hpp"
#include "search/store_writer.hpp"

using namespace kmcts;
namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& name) { return test::fresh_dir("writer-" + name); }

NodeRecord node(int id) {
  NodeRecord n;
  n.id = id;
  n.hash = sha256_hex("kernel " + std::to_string(id));
  n.origin = id == 0 ? "seed" : "expand";
  return n;
}

StoreWriter::Write add(int id) {
  return [n = node(id)](RunStore& st) { st.add_node(n); };
}

std::vector<int> ids(const fs::path& dir) {
  std::vector<int> out;
  for (const auto& n : RunStore::open(dir)->nodes()) out.push_back(n.id);
  return out;
}

}  // namespace

TEST_CASE("store writer: sync makes every queued write durable, in order") {
  auto dir = fresh_dir("sync");
  auto store = RunStore::create(dir, {{"problem", "p"}}, nlohmann::json::object());
  StoreWriter writer(*store, /*flush_s=*/60);  // no timed commit: only sync() commits
  for (int i = 0; i < 50; ++i) {
    writer.write(add(i));
    if (i % 7 == 6) writer.end_batch();
  }
  writer.sync();
  CHECK(ids(dir).size() == 50);
  writer.write([](RunStore& st) { st.append_event(EventRecord{1, 0.5, "note", {{"x", 1}}}); });
  writer.sync();
  REQUIRE(RunStore::open(dir)->events().size() == 1);
  fs::remove_all(dir);
}

TEST_CASE("store writer: a failing write undoes its batch only; the error reaches the caller; later writes are dropped") {
  auto dir = fresh_dir("error");
  auto store = RunStore::create(dir, {{"problem", "p"}}, nlohmann::json::object());
  StoreWriter writer(*store, 60);
  writer.write(add(0));
  writer.end_batch();
  writer.write(add(1));                                                     // same batch as the failure:
  writer.write([](RunStore& st) { st.update_node(node(99)); });             // unknown node: RunError
  writer.end_batch();
  CHECK_THROWS_AS(writer.sync(), RunError);
  CHECK_THROWS_AS(writer.check(), RunError);
  writer.write(add(2));  // dropped: the writer stopped at the first error
  CHECK_THROWS_AS(writer.sync(), RunError);
  CHECK(ids(dir) == std::vector<int>{0});
  fs::remove_all(dir);
}

TEST_CASE("store writer: muted writes vanish; stopping commits whole batches and drops a half-written one") {
  auto dir = fresh_dir("stop");
  {
    auto store = RunStore::create(dir, {{"problem", "p"}}, nlohmann::json::object());
    StoreWriter writer(*store, 60);
    writer.set_muted(true);
    writer.write(add(5));
    writer.end_batch();
    writer.set_muted(false);
    writer.write(add(0));
    writer.write(add(1));
    writer.end_batch();
    writer.write(add(2));  // its batch never ends: undone when the writer stops
  }
  CHECK(ids(dir) == std::vector<int>{0, 1});
  fs::remove_all(dir);
}

TEST_CASE("store writer: a timed commit makes finished batches visible to readers without sync") {
  auto dir = fresh_dir("timed");
  auto store = RunStore::create(dir, {{"problem", "p"}}, nlohmann::json::object());
  StoreWriter writer(*store, /*flush_s=*/0.01);
  writer.write(add(0));
  writer.end_batch();
  bool seen = false;
  for (int i = 0; i < 500 && !seen; ++i) {  // up to 5 s; the commit is due after 10 ms
    seen = ids(dir).size() == 1;
    if (!seen) usleep(10000);
  }
  CHECK(seen);
  fs::remove_all(dir);
}
