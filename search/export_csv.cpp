// The CSV export: one row per node, for spreadsheets and data-frame tools. Kept apart from
// export.cpp so each file reads in one go.
#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join

#include <map>
#include <string>
#include <vector>

#include "search/export.hpp"
#include "search/run_store.hpp"

namespace kmcts {
namespace {

// RFC 4180: a field holding a comma, a quote or a line break is quoted, with quotes
// doubled. Plans routinely hold commas ("TILE 16 -> 32, UNROLL 4"), so this is not optional.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

// Shortest text that reads back to the same double ("2", "0.1", "1e+06").
std::string number(double x) { return fmt::format("{}", x); }

}  // namespace

std::string export_csv(const std::vector<NodeRecord>& nodes, const std::vector<EdgeRecord>& edges) {
  // Parents in the order their edges appeared (a parent has at most one edge to a child).
  std::map<int, std::vector<int>> parents;
  for (const EdgeRecord& e : edges) parents[e.child].push_back(e.parent);

  // RFC 4180 ends records with CRLF; Python's csv module and spreadsheets expect it too.
  const char* eol = "\r\n";
  std::string out =
      "id,hash,status,verdict,origin,depth,plan,parents,visits,value,speedup,median_ns,reward,"
      "debug_attempts,params,created_seq";
  out += eol;
  for (const NodeRecord& n : nodes) {
    const auto it = parents.find(n.id);
    const std::string parent_list =
        it == parents.end() ? "" : fmt::format("{}", fmt::join(it->second, ";"));
    const std::string value = n.visits > 0 ? number(n.value_sum / n.visits) : "";
    const std::string params =
        n.meta.is_object() && n.meta.contains("params") ? n.meta["params"].dump() : "";
    const std::vector<std::string> fields = {
        std::to_string(n.id), n.hash, to_string(n.status), n.verdict, n.origin,
        std::to_string(n.depth), n.plan, parent_list, std::to_string(n.visits), value,
        number(n.speedup), number(n.median_ns), number(n.reward), std::to_string(n.debug_attempts),
        params, std::to_string(n.created_seq)};
    for (size_t i = 0; i < fields.size(); ++i) {
      if (i > 0) out += ',';
      out += csv_field(fields[i]);
    }
    out += eol;
  }
  return out;
}

std::string export_csv(const RunStore& store) { return export_csv(store.nodes(), store.edges()); }

}  // namespace kmcts
