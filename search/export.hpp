#pragma once
// Exports of a stored run for people and other tools: one JSON document, a CSV table of the
// nodes (for spreadsheets and pandas), and the search graph as Graphviz DOT or SVG.
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

/// One RFC 4180 row per node (CRLF line ends, fields with commas, quotes or line breaks
/// quoted, quotes doubled) after a header: id, hash, status, verdict, origin, depth, plan,
/// parents ("0;3": every incoming edge's parent, first appearance order), visits, value (mean
/// backed-up reward, empty before the first visit), speedup, median_ns, reward,
/// debug_attempts, params (compact JSON of meta.params, empty if absent), created_seq.
std::string export_csv(const RunStore& store);
std::string export_csv(const std::vector<NodeRecord>& nodes, const std::vector<EdgeRecord>& edges);

/// Renders DOT text to SVG with Graphviz (`program -Tsvg`, sandboxed, 120 s limit). When the
/// program is not on PATH: InputError telling how to install it. When it fails: RunError with
/// its first line of stderr. `program` is a parameter so tests can name a missing one.
std::string render_svg(const std::string& dot, const std::string& program = "dot");

/// The ok node with the highest speedup (lowest id on ties), if any.
std::optional<int> best_node(const std::vector<NodeRecord>& nodes);
/// Node ids from the root to `node`, following each node's first non-transposition parent edge
/// (in insertion order). Just {node} for the root or a node without such a parent.
std::vector<int> path_to(int node, const std::vector<EdgeRecord>& edges);

}  // namespace kmcts
