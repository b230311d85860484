#include "search/variant_graph.hpp"

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string_view>

namespace kmcts {

void VariantGraph::no_node(int id) { throw std::out_of_range("no node " + std::to_string(id)); }

int VariantGraph::add_root(NodeRecord root) {
  if (size() != 0) throw std::logic_error("the graph already has a root");
  root.id = 0;
  root.depth = 0;
  by_hash_.insert(hash_key_(root.hash), 0);
  tree_parent_.push_back(-1);
  expand_out_.push_back(0);
  reaches_cycle_.push_back(0);
  g_[boost::add_vertex(g_)] = std::move(root);
  return 0;
}

void VariantGraph::reserve(int nodes) {
  const auto n = static_cast<size_t>(std::max(0, nodes));
  g_.m_vertices.reserve(n);  // Boost's vertex vector (vecS), public in adjacency_list
  tree_parent_.reserve(n);
  expand_out_.reserve(n);
  reaches_cycle_.reserve(n);
}

VariantGraph::Added VariantGraph::add_child(int parent, NodeRecord node, EdgeRecord link) {
  vertex(parent);  // validates
  Added added;
  const uint64_t key = hash_key_(node.hash);
  if (auto existing = find(node.hash, key)) {
    added.node = *existing;
  } else {
    added.node = size();
    added.new_node = true;
    node.id = added.node;
    node.depth = this->node(parent).depth + 1;
    by_hash_.insert(key, added.node);
    tree_parent_.push_back(parent);
    expand_out_.push_back(0);
    reaches_cycle_.push_back(0);
    // Boost copies a property it is given: add a default one (no allocation) and move ours in.
    g_[boost::add_vertex(g_)] = std::move(node);
  }
  if (!added.new_node && edge(parent, added.node)) return added;  // a new node has no edges yet
  added.closes_cycle = !added.new_node && reaches(added.node, parent);
  link.parent = parent;
  link.child = added.node;
  link.transposition = !added.new_node;
  if (link.kind == EdgeKind::expand) expand_out_[static_cast<size_t>(parent)]++;
  g_[boost::add_edge(vertex(parent), vertex(added.node), g_).first] = std::move(link);
  added.new_edge = true;
  if (added.closes_cycle || reaches_cycle(added.node)) mark_reaches_cycle(parent);
  return added;
}

void VariantGraph::mark_reaches_cycle(int id) {
  std::vector<int> stack{id};
  while (!stack.empty()) {
    int n = stack.back();
    stack.pop_back();
    if (reaches_cycle_[static_cast<size_t>(n)]) continue;
    reaches_cycle_[static_cast<size_t>(n)] = 1;
    for_each_parent(n, [&](int p) {
      if (!reaches_cycle_[static_cast<size_t>(p)]) stack.push_back(p);
      return true;
    });
  }
}

uint64_t VariantGraph::default_hash_key(const std::string& hash) { return std::hash<std::string_view>{}(hash); }

std::optional<int> VariantGraph::find(const std::string& hash) const { return find(hash, hash_key_(hash)); }

std::optional<int> VariantGraph::find(const std::string& hash, uint64_t key) const {
  const int id = by_hash_.find(key, [&](int n) { return node(n).hash == hash; });
  return id >= 0 ? std::optional<int>(id) : std::nullopt;
}

EdgeRecord* VariantGraph::edge(int parent, int child) {
  auto [e, exists] = boost::edge(vertex(parent), vertex(child), g_);
  return exists ? &g_[e] : nullptr;
}

const EdgeRecord* VariantGraph::edge(int parent, int child) const {
  auto [e, exists] = boost::edge(vertex(parent), vertex(child), g_);
  return exists ? &g_[e] : nullptr;
}

std::vector<int> VariantGraph::children(int id) const {
  std::vector<int> out;
  for (auto [it, end] = boost::out_edges(vertex(id), g_); it != end; ++it)
    out.push_back(static_cast<int>(boost::target(*it, g_)));
  return out;
}

std::vector<int> VariantGraph::parents(int id) const {
  std::vector<int> out;
  for (auto [it, end] = boost::in_edges(vertex(id), g_); it != end; ++it)
    out.push_back(static_cast<int>(boost::source(*it, g_)));
  return out;
}

std::vector<EdgeRecord> VariantGraph::edges() const {
  std::vector<EdgeRecord> out;
  for (auto [it, end] = boost::edges(g_); it != end; ++it) out.push_back(g_[*it]);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.seq < b.seq; });
  return out;
}

bool VariantGraph::reaches(int from, int to) const {
  // Visited marks stamped per call: a call costs the nodes it visits, not the graph's size.
  if (++reach_epoch_ == 0) std::fill(reach_seen_.begin(), reach_seen_.end(), 0), reach_epoch_ = 1;
  reach_seen_.resize(static_cast<size_t>(size()), 0);
  std::vector<int> stack{from};
  while (!stack.empty()) {
    int n = stack.back();
    stack.pop_back();
    if (n == to) return true;
    if (reach_seen_[static_cast<size_t>(n)] == reach_epoch_) continue;
    reach_seen_[static_cast<size_t>(n)] = reach_epoch_;
    for_each_child(n, [&](int c, const EdgeRecord&) {
      if (reach_seen_[static_cast<size_t>(c)] != reach_epoch_) stack.push_back(c);
      return true;
    });
  }
  return false;
}

std::vector<int> VariantGraph::tree_path(int id) const { return tree_path(id, 0); }

std::vector<int> VariantGraph::tree_path(int id, int top) const {
  std::vector<int> path;
  for (int n = id; n != -1; n = tree_parent_.at(n)) {
    path.push_back(n);
    if (n == top) break;
  }
  std::reverse(path.begin(), path.end());
  return path;
}

}  // namespace kmcts
