#pragma once
// The graph of kernel variants. A node is a canonical source (one hash, one node); an
// edge is "this parent led to this child". Reaching a known source again adds an edge to
// the existing node (a transposition), never a duplicate node. Edges may close cycles
// (an agent can re-derive an ancestor); every traversal here is cycle-safe.
// Only the coordinator thread writes it (and calls reaches(), which keeps scratch marks).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "search/hash_index.hpp"
#include "search/records.hpp"

namespace kmcts {

class VariantGraph {
 public:
  // The records as Boost keeps them. Boost default-constructs one for every vertex and edge
  // it adds (and copies an edge's twice) before ours is moved in; these defaults leave the
  // JSON fields null, so that costs no allocation (a record's own default is an empty object).
  struct StoredNode : NodeRecord {
    StoredNode() : NodeRecord{.meta = nlohmann::json()} {}
    using NodeRecord::operator=;
  };
  struct StoredEdge : EdgeRecord {
    StoredEdge() : EdgeRecord{.plan_data = nlohmann::json()} {}
    using EdgeRecord::operator=;
  };
  using Storage = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, StoredNode, StoredEdge>;

  /// The hash index's 64-bit key of a hash string (std::hash by default; a test passes one
  /// under which every hash collides).
  using HashKey = uint64_t (*)(const std::string& hash);
  static uint64_t default_hash_key(const std::string& hash);
  explicit VariantGraph(HashKey hash_key = &default_hash_key) : hash_key_(hash_key) {}

  struct Added {
    int node = -1;
    bool new_node = false;   // the source was not in the graph
    bool new_edge = false;   // parent -> node was not an edge yet
    bool closes_cycle = false;
  };

  /// Adds the root (id 0). Throws std::logic_error if the graph is not empty.
  int add_root(NodeRecord root);
  /// Adds parent -> (node with `node.hash`): a new node, or an edge to the existing one.
  Added add_child(int parent, NodeRecord node, EdgeRecord link);

  /// Room for `nodes` nodes without moving the ones stored: a search reserves its budget, so the
  /// graph does not copy every node each time it doubles (with the page faults of the new copy,
  /// 5% of the coordinator's CPU at 10^5 nodes). Memory is only touched as nodes are added.
  void reserve(int nodes);
  std::optional<int> find(const std::string& hash) const;
  int size() const { return static_cast<int>(boost::num_vertices(g_)); }
  int edge_count() const { return static_cast<int>(boost::num_edges(g_)); }

  NodeRecord& node(int id) { return g_[vertex(id)]; }
  const NodeRecord& node(int id) const { return g_[vertex(id)]; }
  EdgeRecord* edge(int parent, int child);
  const EdgeRecord* edge(int parent, int child) const;
  std::vector<int> children(int id) const;
  /// Calls f(child, edge) for each edge out of `id`, in insertion order, allocating nothing
  /// (the hot path of selection); f returns false to stop early.
  template <class F>
  void for_each_child(int id, F f) const {
    for (auto [it, end] = boost::out_edges(vertex(id), g_); it != end; ++it)
      if (!f(static_cast<int>(boost::target(*it, g_)), g_[*it])) return;
  }
  /// The same, with the edges writable (f takes EdgeRecord&).
  template <class F>
  void for_each_child(int id, F f) {
    for (auto [it, end] = boost::out_edges(vertex(id), g_); it != end; ++it)
      if (!f(static_cast<int>(boost::target(*it, g_)), g_[*it])) return;
  }
  /// Asks the CPU to start loading the records of `id`'s children and of its edges to them: a
  /// hint that changes no result. A loop over a node's children on a 10^5-node graph otherwise
  /// waits for one cache miss after another (a backup's recompute spent 80% of its time there);
  /// hinted a node ahead, the misses overlap.
  void prefetch_children(int id) const {
    for (auto [it, end] = boost::out_edges(vertex(id), g_); it != end; ++it) {
      __builtin_prefetch(&g_[*it]);
      __builtin_prefetch(&g_[boost::target(*it, g_)]);
    }
  }
  /// The same hint one step earlier: `id`'s list of out-edges (a block of its own per node, the
  /// first miss of any loop over its children).
  void prefetch_edges(int id) const { __builtin_prefetch(g_.m_vertices[vertex(id)].m_out_edges.data()); }
  /// Children reached by expand edges (not debug edges): O(1), kept as edges are added.
  int expand_children(int id) const { return expand_out_[static_cast<size_t>(id)]; }
  std::vector<int> parents(int id) const;
  /// Calls f(parent) for each edge into `id`, allocating nothing; f returns false to stop early.
  template <class F>
  void for_each_parent(int id, F f) const {
    for (auto [it, end] = boost::in_edges(vertex(id), g_); it != end; ++it)
      if (!f(static_cast<int>(boost::source(*it, g_)))) return;
  }
  std::vector<EdgeRecord> edges() const;

  /// True if a directed path leads from `from` to `to` (iterative, visits each node once).
  bool reaches(int from, int to) const;
  /// Root -> id along each node's first (tree) parent edge; the tree edges form no cycle.
  std::vector<int> tree_path(int id) const;
  /// tree_path() from `top` where `top` lies on it (a search rooted below the seed walks only
  /// that far), else from the root.
  std::vector<int> tree_path(int id, int top) const;
  /// The first parent of `id` (the one it was made from), -1 for the root.
  int tree_parent(int id) const { return tree_parent_.at(static_cast<size_t>(id)); }
  /// True if a cycle can be reached from `id` (it lies on one, or below one of its edges).
  /// Kept as edges are added, O(1) to ask: below a node where it is false the graph is a DAG,
  /// so a result computed from the children alone holds whatever the order of a traversal.
  bool reaches_cycle(int id) const { return reaches_cycle_[static_cast<size_t>(id)] != 0; }

  const Storage& storage() const { return g_; }

 private:
  Storage::vertex_descriptor vertex(int id) const {  // inline: every node and edge access checks it
    if (id < 0 || id >= size()) no_node(id);
    return static_cast<Storage::vertex_descriptor>(id);
  }
  [[noreturn]] static void no_node(int id);  // throws std::out_of_range
  /// Marks `id` and every node that reaches it (each once: marks are never taken back).
  void mark_reaches_cycle(int id);
  std::optional<int> find(const std::string& hash, uint64_t key) const;
  HashKey hash_key_;
  // Nodes by a 64-bit key of their hash (colliding keys compared by the node's hash): the
  // index keeps no second copy of every hash string.
  HashIndex by_hash_;
  std::vector<int> tree_parent_;  // first parent of each node, -1 for the root
  std::vector<int> expand_out_;   // out-edges of kind expand, per node (kinds never change)
  std::vector<char> reaches_cycle_;  // per node, see reaches_cycle()
  mutable std::vector<uint32_t> reach_seen_;  // reaches()'s visited marks, by call
  mutable uint32_t reach_epoch_ = 0;
  Storage g_;
};

}  // namespace kmcts
