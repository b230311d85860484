#include "search/export.hpp"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/graphviz.hpp>
#include <boost/property_map/transform_value_property_map.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "core/hash.hpp"
#include "hardware/sandbox.hpp"
#include "search/run_state.hpp"
#include "search/run_store.hpp"

namespace kmcts {
using nlohmann::json;

json export_json(const RunStore& store) {
  json out;
  out["run"] = store.run_info();
  out["config"] = store.config();
  out["status"] = run_status(store);
  out["nodes"] = json::array();
  for (const NodeRecord& n : store.nodes()) out["nodes"].push_back(to_json(n));
  out["edges"] = json::array();
  for (const EdgeRecord& e : store.edges()) out["edges"].push_back(to_json(e));
  out["evaluations"] = json::array();
  // Samples are read so that each "samples" count is right, then left out of the document.
  for (const EvaluationRecord& ev : store.evaluations(/*with_samples=*/true))
    out["evaluations"].push_back(
        {{"node", ev.node}, {"seq", ev.seq}, {"result", to_json(ev.result, false)}});
  const auto summary = run_summary(store);
  out["summary"] = summary ? *summary : json(nullptr);
  return out;
}

std::optional<int> best_node(const std::vector<NodeRecord>& nodes) {
  const NodeRecord* best = nullptr;
  for (const NodeRecord& n : nodes)
    if (n.status == NodeStatus::ok &&
        (!best || n.speedup > best->speedup || (n.speedup == best->speedup && n.id < best->id)))
      best = &n;
  return best ? std::optional<int>(best->id) : std::nullopt;
}

std::vector<int> path_to(int node, const std::vector<EdgeRecord>& edges) {
  std::map<int, int> first_parent;  // child -> parent of its first non-transposition edge
  for (const EdgeRecord& e : edges)
    if (!e.transposition) first_parent.emplace(e.child, e.parent);  // emplace keeps the first
  std::vector<int> path{node};
  std::set<int> seen{node};  // a malformed store must not loop forever
  for (auto it = first_parent.find(node); it != first_parent.end();
       it = first_parent.find(it->second)) {
    if (!seen.insert(it->second).second) break;
    path.push_back(it->second);
  }
  return {path.rbegin(), path.rend()};
}

namespace {

struct VertexProps {
  NodeRecord node;
  bool on_best_path = false;
  bool best = false;
};

struct EdgeProps {
  EdgeRecord edge;
  bool on_best_path = false;
};

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, VertexProps,
                                    EdgeProps>;

// Text inside a quoted DOT string: quotes and backslashes escaped, line breaks as DOT's \n.
// `\n` sequences we add ourselves are written after escaping, so they stay line breaks.
std::string dot_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c != '\r') {
      out += c;
    }
  }
  return out;
}

// Plans can be paragraphs; the edge label shows the start. Cutting at a UTF-8 character
// boundary keeps the file valid UTF-8, which dot insists on.
std::string shorten(const std::string& s, size_t max_bytes) {
  const std::string one_line = s.substr(0, s.find('\n'));
  if (one_line.size() <= max_bytes) return one_line;
  size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(one_line[cut]) & 0xC0) == 0x80) --cut;
  return one_line.substr(0, cut) + "...";
}

std::string node_label(const NodeRecord& n) {
  std::string second;
  if (n.status == NodeStatus::ok)
    second = fmt::format("{:.2f}x / {}", n.speedup, n.verdict.empty() ? "ok" : n.verdict);
  else if (n.status == NodeStatus::failed)
    second = fmt::format("- / {}", n.verdict.empty() ? "failed" : n.verdict);
  else
    second = "- / pending";
  return dot_escape(fmt::format("#{} {}", n.id, short_hash(n.hash))) + "\\n" + dot_escape(second);
}

class VertexWriter {
 public:
  explicit VertexWriter(const Graph& g) : g_(g) {}
  template <class Vertex>
  void operator()(std::ostream& os, const Vertex& v) const {
    const VertexProps& p = g_[v];
    // Each attribute once: DOT keeps only the last of repeated keys, so a failed node on the
    // best path must combine both looks (red text, dashed and bold green border).
    std::string color, fontcolor, fill;
    std::vector<std::string> styles;
    if (p.node.status == NodeStatus::failed) {
      color = fontcolor = "red";
      styles.push_back("dashed");
    } else if (p.node.status == NodeStatus::pending) {
      color = fontcolor = "grey";
    }
    if (p.on_best_path || p.best) {
      color = "darkgreen";
      styles.push_back("bold");
    }
    if (p.best) {
      styles.push_back("filled");
      fill = "palegreen";
    }
    std::string attrs = fmt::format("label=\"{}\"", node_label(p.node));
    if (!color.empty()) attrs += ", color=" + color;
    if (!fontcolor.empty()) attrs += ", fontcolor=" + fontcolor;
    if (!fill.empty()) attrs += ", fillcolor=" + fill;
    if (!styles.empty()) attrs += fmt::format(", style=\"{}\"", fmt::join(styles, ","));
    if (p.on_best_path) attrs += p.best ? ", penwidth=3" : ", penwidth=2";
    os << "[" << attrs << "]";
  }

 private:
  const Graph& g_;
};

class EdgeWriter {
 public:
  explicit EdgeWriter(const Graph& g) : g_(g) {}
  template <class Edge>
  void operator()(std::ostream& os, const Edge& e) const {
    const EdgeProps& p = g_[e];
    std::vector<std::string> styles;
    std::string attrs = fmt::format("label=\"{}\"", dot_escape(shorten(p.edge.plan, 40)));
    // Debug edges keep their orange label on the best path; the line itself turns green.
    if (p.on_best_path)
      attrs += ", color=darkgreen, penwidth=2.5";
    else if (p.edge.kind == EdgeKind::debug)
      attrs += ", color=orange";
    if (p.edge.kind == EdgeKind::debug) attrs += ", fontcolor=orange";
    if (p.on_best_path) styles.push_back("bold");
    if (p.edge.transposition) styles.push_back("dashed");
    if (!styles.empty()) attrs += fmt::format(", style=\"{}\"", fmt::join(styles, ","));
    os << "[" << attrs << "]";
  }

 private:
  const Graph& g_;
};

struct GraphWriter {
  void operator()(std::ostream& os) const {
    os << "rankdir=TB;\n"
       << "node [shape=box, fontname=\"Helvetica\", fontsize=10];\n"
       << "edge [fontname=\"Helvetica\", fontsize=9];\n";
  }
};

}  // namespace

std::string export_dot(const std::vector<NodeRecord>& nodes, const std::vector<EdgeRecord>& edges) {
  Graph g;
  std::map<int, Graph::vertex_descriptor> vertex_of;
  for (const NodeRecord& n : nodes) vertex_of[n.id] = boost::add_vertex(VertexProps{n}, g);

  std::set<int> path_nodes;
  std::set<std::pair<int, int>> path_edges;
  if (const auto best = best_node(nodes)) {
    const std::vector<int> path = path_to(*best, edges);
    path_nodes.insert(path.begin(), path.end());
    for (size_t i = 1; i < path.size(); ++i) path_edges.emplace(path[i - 1], path[i]);
    g[vertex_of.at(*best)].best = true;
  }
  for (int id : path_nodes)
    if (auto it = vertex_of.find(id); it != vertex_of.end()) g[it->second].on_best_path = true;

  for (const EdgeRecord& e : edges) {
    const auto from = vertex_of.find(e.parent), to = vertex_of.find(e.child);
    if (from == vertex_of.end() || to == vertex_of.end()) continue;  // dangling: nothing to draw
    const bool on_path = !e.transposition && path_edges.count({e.parent, e.child}) > 0;
    boost::add_edge(from->second, to->second, EdgeProps{e, on_path}, g);
  }

  // DOT node names are the node ids (stable across exports), not Boost's vertex indices.
  const auto node_ids = boost::make_transform_value_property_map(
      [](const VertexProps& p) { return p.node.id; }, boost::get(boost::vertex_bundle, g));
  std::ostringstream os;
  boost::write_graphviz(os, g, VertexWriter(g), EdgeWriter(g), GraphWriter(), node_ids);
  return os.str();
}

std::string export_dot(const RunStore& store) { return export_dot(store.nodes(), store.edges()); }

namespace {

// A private temporary folder, removed on every way out.
struct ScratchDir {
  std::filesystem::path path;
  ScratchDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "kmcts-svg-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw RunError("svg export: cannot create a temporary folder");
    path = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

}  // namespace

std::string render_svg(const std::string& dot, const std::string& program) {
  // Files in and out, not pipes: the sandbox gives the child /dev/null as stdin, and caps what
  // it keeps of stdout, while the SVG of a large tree runs to megabytes.
  ScratchDir scratch;
  const auto in = scratch.path / "tree.dot", out = scratch.path / "tree.svg";
  std::ofstream(in, std::ios::binary) << dot;
  SandboxLimits limits;
  limits.timeout_s = 120;  // dot's layout is superlinear; a tree of thousands of nodes takes seconds
  const SandboxResult r = run_sandboxed({program, "-Tsvg", "-o", out.string(), in.string()}, limits);
  if (!r.started && r.error.find("not found") != std::string::npos)
    throw InputError("svg export needs Graphviz's dot (apt-get install graphviz); use --format dot");
  if (!r.started) throw RunError("svg export: " + r.error);
  if (!r.exited_cleanly()) {
    const std::string why = r.timed_out ? "timed out"
                            : r.signal   ? "killed by " + signal_name(r.signal)
                                         : r.err.substr(0, r.err.find('\n'));
    throw RunError(fmt::format("svg export: {} -Tsvg failed: {}", program, why));
  }
  std::ifstream svg(out, std::ios::binary);
  return {std::istreambuf_iterator<char>(svg), {}};
}

}  // namespace kmcts
