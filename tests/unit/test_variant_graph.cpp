// The variant graph: one node per canonical source, transposition edges, cycle safety.
#include <doctest/doctest.h>

#include "search/canonical.hpp"
#include "search/hash_index.hpp"
#include "search/variant_graph.hpp"

using namespace kmcts;

namespace {
NodeRecord node_with(const std::string& source) {
  NodeRecord n;
  n.hash = canonical_hash(source);
  return n;
}
}  // namespace

TEST_CASE("canonical source ignores comments and whitespace, keeps literals and line structure") {
  CHECK(canonical_source("int  a = 1; // one\n\n\nint b;") == "int a = 1;\nint b;");
  CHECK(canonical_source("/* c */int a;") == "int a;");
  CHECK(canonical_source("const char* s = \"a  // b\";") == "const char* s = \"a  // b\";");
  CHECK(canonical_hash("x  = 1;") == canonical_hash("x = 1; /* same */"));
  CHECK(canonical_hash("#define A 1\nint x;") != canonical_hash("#define A 1 int x;"));
}

TEST_CASE("graph: hashes that share an index key stay apart, and each is found again") {
  VariantGraph g([](const std::string&) -> uint64_t { return 7; });  // every hash collides
  g.add_root(node_with("root"));
  auto a = g.add_child(0, node_with("a"), {});
  auto b = g.add_child(0, node_with("b"), {});
  CHECK(a.new_node);
  CHECK(b.new_node);
  CHECK(a.node != b.node);
  auto again = g.add_child(a.node, node_with("b"), {});
  CHECK_FALSE(again.new_node);
  CHECK(again.node == b.node);
  CHECK(g.find(canonical_hash("root")) == 0);
  CHECK(g.find(canonical_hash("a")) == a.node);
  CHECK_FALSE(g.find(canonical_hash("c")).has_value());
  CHECK(g.size() == 3);
}

TEST_CASE("hash index: every node is found again across growth, colliding keys and keys alike in their low bits") {
  HashIndex index;
  CHECK(index.find(1, [](int) { return true; }) == -1);  // empty
  // Keys that differ only above bit 40 (a mask of the low bits would pile them up), three
  // nodes per key (told apart by the predicate), and enough of them to double the array often.
  constexpr int kKeys = 3000;
  auto key_of = [](int k) { return static_cast<uint64_t>(k) << 40; };
  for (int n = 0; n < 3 * kKeys; ++n) index.insert(key_of(n % kKeys), n);
  CHECK(index.size() == 3 * kKeys);
  for (int n = 0; n < 3 * kKeys; ++n) {
    INFO("node ", n);
    REQUIRE(index.find(key_of(n % kKeys), [n](int m) { return m == n; }) == n);
  }
  CHECK(index.find(key_of(kKeys + 5), [](int) { return true; }) == -1);  // a key never filed
  CHECK(index.find(key_of(7), [](int m) { return m == 8; }) == -1);      // filed, but not that node
}

TEST_CASE("graph: the same source reached twice is one node with two incoming edges") {
  VariantGraph g;
  g.add_root(node_with("root"));
  auto a = g.add_child(0, node_with("a"), {});
  auto b = g.add_child(0, node_with("b"), {});
  CHECK(a.new_node);
  CHECK(b.new_node);
  auto again = g.add_child(a.node, node_with("b /* reformatted */"), {});
  CHECK_FALSE(again.new_node);
  CHECK(again.new_edge);
  CHECK(again.node == b.node);
  CHECK(g.size() == 3);
  CHECK(g.parents(b.node).size() == 2);
  CHECK(g.edge(a.node, b.node)->transposition);
  CHECK_FALSE(g.edge(0, b.node)->transposition);
  // The same edge twice is not a second edge.
  auto dup = g.add_child(0, node_with("a"), {});
  CHECK_FALSE(dup.new_edge);
  CHECK(g.edge_count() == 3);
  // The tree path follows first parents.
  CHECK(g.tree_path(b.node) == std::vector<int>{0, b.node});
  CHECK(g.node(b.node).depth == 1);
}

TEST_CASE("graph: an edge back to an ancestor is recorded and every traversal terminates") {
  VariantGraph g;
  g.add_root(node_with("root"));
  int a = g.add_child(0, node_with("a"), {}).node;
  int b = g.add_child(a, node_with("b"), {}).node;
  auto back = g.add_child(b, node_with("root"), {});  // an agent re-derived the seed
  CHECK(back.node == 0);
  CHECK(back.closes_cycle);
  CHECK(g.reaches(b, a));
  CHECK(g.reaches(0, b));
  CHECK(g.tree_path(b) == std::vector<int>{0, a, b});
  CHECK_FALSE(g.add_child(a, node_with("c"), {}).closes_cycle);
}
