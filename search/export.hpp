#pragma once
// Exports of a stored run for people and other tools: one JSON document, and the search graph
// as Graphviz DOT (render with `dot -Tsvg tree.dot > tree.svg`).
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "search/records.hpp"

namespace kmcts {

class RunStore;

/// {"run", "config", "nodes", "edges", "evaluations" (without raw samples), "summary" (or null)}.
nlohmann::json export_json(const RunStore& store);

/// The graph in DOT. Node label "#id short-hash\n<speedup>x / <verdict>"; failed nodes red and
/// dashed, pending grey; the best node and the path from the root to it bold green;
/// transposition edges dashed, debug edges orange.
std::string export_dot(const RunStore& store);
/// The same from records (what export_dot(store) calls; also usable on a live graph).
std::string export_dot(const std::vector<NodeRecord>& nodes, const std::vector<EdgeRecord>& edges);

/// The ok node with the highest speedup (lowest id on ties), if any.
std::optional<int> best_node(const std::vector<NodeRecord>& nodes);
/// Node ids from the root to `node`, following each node's first non-transposition parent edge
/// (in insertion order). Just {node} for the root or a node without such a parent.
std::vector<int> path_to(int node, const std::vector<EdgeRecord>& edges);

}  // namespace kmcts
