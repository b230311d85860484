#include "reports/run_html.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/files.hpp"
#include "hardware/evaluator.hpp"
#include "search/export.hpp"
#include "search/run_state.hpp"
#include "search/run_store.hpp"
#include "search/summary_table.hpp"
#include "reports/unified_diff.hpp"

namespace kmcts {
namespace fs = std::filesystem;
using nlohmann::json;

std::string html_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

namespace {

constexpr const char* kStyle = R"(
body { font: 15px/1.45 "DejaVu Sans", "Segoe UI", Helvetica, Arial, sans-serif; color: #1d1d1f; margin: 0;
       background: #f6f7f9; }
main { max-width: 1160px; margin: 0 auto; padding: 24px 28px 60px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 0 0 12px; border-bottom: 1px solid #e3e5e8; padding-bottom: 6px; }
.sub { color: #5f6368; margin: 0 0 16px; font-size: 13px; word-break: break-all; }
nav a { margin-right: 14px; color: #0b57d0; text-decoration: none; font-size: 14px; }
section { background: #fff; border: 1px solid #e3e5e8; border-radius: 8px; padding: 16px 20px; margin: 16px 0; }
table { border-collapse: collapse; font-size: 14px; }
td, th { padding: 4px 12px 4px 0; text-align: left; vertical-align: top; }
th { color: #5f6368; font-weight: 600; }
table.kv th { width: 170px; }
table.rows td, table.rows th { border-bottom: 1px solid #eef0f2; padding-right: 18px; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.ok { color: #137333; } .failed { color: #c5221f; }
pre { font: 12.5px/1.4 "DejaVu Sans Mono", Menlo, Consolas, monospace; background: #fafbfc; border: 1px solid #eef0f2;
      border-radius: 6px; padding: 10px 12px; overflow: auto; max-height: 640px; margin: 0; }
pre.diff span { display: block; }
pre.diff .add { background: #e6f4ea; color: #0d652d; } pre.diff .del { background: #fce8e6; color: #a50e0e; }
pre.diff .hunk { color: #0b57d0; background: #eef3fd; } pre.diff .file { color: #5f6368; font-weight: 600; }
.tree { overflow: auto; max-height: 900px; border: 1px solid #eef0f2; border-radius: 6px; background: #fff; }
.tree svg { width: 100%; height: auto; }
#full-size:checked ~ .tree svg { width: auto; }
.toggle { font-size: 13px; color: #0b57d0; cursor: pointer; margin-left: 6px; }
.legend { font-size: 13px; color: #5f6368; margin: 0 0 8px; }
.swatch { display: inline-block; width: 12px; height: 12px; border-radius: 2px; vertical-align: -1px; margin: 0 4px 0 10px; }
code { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 13px; }
)";

std::string text_or_dash(const json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return "-";
  return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
}

std::string row(const std::string& name, const std::string& value_html) {
  return fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", html_escape(name), value_html);
}

struct RunFacts {
  json info, config, summary;
  std::vector<NodeRecord> nodes;
  std::vector<EdgeRecord> edges;
  std::vector<EvaluationRecord> evaluations;
  std::optional<int> best;
};

std::string summary_section(const RunFacts& f, const fs::path& run_dir, const RunHtmlContext& ctx) {
  const json& s = f.summary;
  const json search = f.config.value("search", json::object());
  std::string configuration = ctx.config.empty() ? fmt::format("strategy {}, policy {}", search.value("strategy", "?"),
                                                               search.value("policy", "?"))
                                                 : ctx.config;
  std::string html = "<section id=\"summary\"><h2>Summary</h2><table class=\"kv\">\n";
  html += row("problem", html_escape(f.info.value("problem", "?")));
  html += row("configuration", "<code>" + html_escape(configuration) + "</code>");
  if (!ctx.overrides.empty()) {
    std::string o;
    for (const std::string& x : ctx.overrides) o += "<code>" + html_escape(x) + "</code><br>";
    html += row("overrides", o);
  }
  html += row("seed", html_escape(search.contains("seed") ? search["seed"].dump() : text_or_dash(f.info, "seed")));
  const std::string status = s.value("status", "running");
  html += row("status", fmt::format("<span class=\"{}\">{}</span>{}", status == "completed" ? "ok" : "failed",
                                    html_escape(status),
                                    s.contains("message") ? " &mdash; " + html_escape(text_or_dash(s, "message")) : ""));
  if (f.best) {
    const NodeRecord& b = f.nodes.at(static_cast<size_t>(*f.best));
    int found_at = 0;
    for (size_t i = 0; i < f.evaluations.size() && !found_at; ++i)
      if (f.evaluations[i].node == b.id) found_at = static_cast<int>(i) + 1;
    const double seed_speedup = f.nodes.empty() ? 0 : f.nodes.front().speedup;
    html += row("best speedup",
                fmt::format("<b>{:.2f}x</b> over the reference ({:.2f}x over the seed kernel), node #{}, {}, found at "
                            "evaluation {}",
                            b.speedup, seed_speedup > 0 ? b.speedup / seed_speedup : 0.0, b.id,
                            html_escape(format_duration_ns(b.median_ns)), found_at));
  } else {
    html += row("best speedup", "no correct kernel");
  }
  int failures = 0;
  double gpu_s = 0;
  for (const EvaluationRecord& e : f.evaluations) {
    failures += !e.result.ok();
    gpu_s += e.result.run_seconds;
  }
  html += row("evaluations", fmt::format("{} ({} failed), {} nodes", f.evaluations.size(), failures, f.nodes.size()));
  const std::string timed = timed_on(f.info.value("evaluator", json()));
  html += row("cost", fmt::format("{} agent calls, {} tokens, ${:.4f}, wall {:.3g} s, {} time {:.3g} s",
                                  text_or_dash(s, "agent_calls"), text_or_dash(s, "tokens"), s.value("dollars", 0.0),
                                  s.value("wall_seconds", 0.0), timed.empty() ? "measurement" : timed, gpu_s));
  html += row("run directory", "<code>" + html_escape(fs::absolute(run_dir).lexically_normal().string()) + "</code>");
  html += row("command", "<code>" + html_escape(f.info.value("command_line", "-")) + "</code>");
  return html + "</table></section>\n";
}

std::string tree_section(const RunFacts& f) {
  const std::string dot = export_dot(f.nodes, f.edges);
  std::string body;
  try {
    const std::string svg = render_svg(dot);
    const auto start = svg.find("<svg");
    // Fitted to the page width by default; the checkbox (CSS only, no script) shows it at full size.
    body = "<input type=\"checkbox\" id=\"full-size\"><label class=\"toggle\" for=\"full-size\">full size "
           "(scroll)</label><div class=\"tree\">" +
           (start == std::string::npos ? svg : svg.substr(start)) + "</div>";
  } catch (const std::exception& e) {
    body = fmt::format("<p>The tree could not be drawn ({}). Its DOT text:</p><pre>{}</pre>", html_escape(e.what()),
                       html_escape(dot));
  }
  return fmt::format(
      "<section id=\"tree\"><h2>Search tree</h2><p class=\"legend\">{} nodes. Each node: #id, hash, speedup over the "
      "reference / verdict."
      "<span class=\"swatch\" style=\"background:palegreen;border:2px solid darkgreen\"></span>best kernel and the "
      "path to it (bold green)<span class=\"swatch\" style=\"border:2px dashed red\"></span>failed variant"
      "<span class=\"swatch\" style=\"background:orange\"></span>debug edge; dashed edges: transpositions.</p>{}"
      "</section>\n",
      f.nodes.size(), body);
}

std::string plan_section(const RunFacts& f) {
  std::string html = "<section id=\"plans\"><h2>Plan history along the best path</h2>\n";
  if (!f.best) return html + "<p>No correct kernel, so no best path.</p></section>\n";
  html += "<table class=\"rows\"><tr><th>step</th><th>node</th><th>origin</th><th>plan</th><th>speedup</th></tr>\n";
  int step = 0;
  for (int id : path_to(*f.best, f.edges)) {
    const NodeRecord& n = f.nodes.at(static_cast<size_t>(id));
    const std::string result = n.status == NodeStatus::ok
                                   ? fmt::format("<span class=\"ok\">{:.2f}x</span>", n.speedup)
                                   : fmt::format("<span class=\"failed\">{}</span>", html_escape(n.verdict));
    html += fmt::format("<tr><td class=\"num\">{}</td><td>#{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td></tr>\n",
                        step++, n.id, html_escape(n.origin), n.plan.empty() ? "seed kernel" : html_escape(n.plan), result);
  }
  return html + "</table></section>\n";
}

std::string diff_html(const std::string& diff) {
  std::string html;
  size_t start = 0;
  while (start < diff.size()) {
    size_t end = diff.find('\n', start);
    if (end == std::string::npos) end = diff.size();
    const std::string line = diff.substr(start, end - start);
    const char* cls = line.rfind("+++", 0) == 0 || line.rfind("---", 0) == 0 ? "file"
                      : line.rfind("@@", 0) == 0                            ? "hunk"
                      : line.rfind('+', 0) == 0                             ? "add"
                      : line.rfind('-', 0) == 0                             ? "del"
                                                                            : "ctx";
    html += fmt::format("<span class=\"{}\">{}</span>", cls, line.empty() ? " " : html_escape(line));
    start = end + 1;
  }
  return html;
}

std::string source_sections(const RunStore& store, const RunFacts& f) {
  if (!f.best || f.nodes.empty()) return "";
  const NodeRecord& best = f.nodes.at(static_cast<size_t>(*f.best));
  const std::string seed_source = store.source(f.nodes.front().hash).value_or("");
  const std::string best_source = store.source(best.hash).value_or("");
  const std::string diff = unified_diff(seed_source, best_source, "seed kernel (node #0)",
                                        fmt::format("best kernel (node #{})", best.id));
  std::string html = "<section id=\"diff\"><h2>Best kernel against the seed kernel</h2>\n";
  html += diff.empty() ? "<p>The best kernel is the seed kernel.</p>" : "<pre class=\"diff\">" + diff_html(diff) + "</pre>";
  html += "</section>\n";
  html += fmt::format("<section id=\"best\"><h2>Best kernel (node #{}, <code>{}</code>)</h2><pre>{}</pre></section>\n",
                      best.id, html_escape(best.hash.substr(0, 12)), html_escape(best_source));
  return html;
}

}  // namespace

std::string run_html(const fs::path& run_dir, const RunHtmlContext& ctx) {
  const auto store = RunStore::open(run_dir);
  RunFacts f;
  f.info = store->run_info();
  f.config = store->config();
  f.summary = run_summary(*store).value_or(json{{"status", run_status(*store)}});
  f.nodes = store->nodes();
  f.edges = store->edges();
  f.evaluations = store->evaluations(/*with_samples=*/false);
  f.best = best_node(f.nodes);
  const std::string problem = f.info.value("problem", "run");
  const std::string title = ctx.config.empty() ? problem : problem + " \xc2\xb7 " + ctx.config;
  std::string html = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>kmcts run: {0}</title>\n"
      "<style>{1}</style></head><body><main>\n<h1>{0}</h1>\n<p class=\"sub\">kmcts run {2}</p>\n<nav>",
      html_escape(title), kStyle, html_escape(fs::absolute(run_dir).lexically_normal().string()));
  if (!ctx.grid_report.empty()) html += fmt::format("<a href=\"{}\">&larr; grid report</a>", html_escape(ctx.grid_report));
  html += "<a href=\"#summary\">summary</a><a href=\"#tree\">search tree</a><a href=\"#plans\">plan history</a>"
          "<a href=\"#diff\">diff</a><a href=\"#best\">best kernel</a><a href=\"#config\">config</a></nav>\n";
  html += summary_section(f, run_dir, ctx);
  html += tree_section(f);
  html += plan_section(f);
  html += source_sections(*store, f);
  html += fmt::format("<section id=\"config\"><h2>Effective config</h2><details><summary>config.json</summary><pre>{}</pre>"
                      "</details></section>\n",
                      html_escape(f.config.dump(2)));
  return html + "</main></body></html>\n";
}

void write_run_html(const fs::path& run_dir, const fs::path& file, const RunHtmlContext& context) {
  if (file.has_parent_path()) fs::create_directories(file.parent_path());
  write_file_atomic(file, run_html(run_dir, context));
}

}  // namespace kmcts
