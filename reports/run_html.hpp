#pragma once
// One run as one self-contained HTML page (inline CSS, the tree as inline SVG, no scripts and
// no external resources): summary, the search tree drawn by Graphviz (best path green, failed
// nodes red), the plan history along the best path, the best kernel's unified diff against
// the seed kernel, the best kernel's source, and the effective config.
#include <filesystem>
#include <string>
#include <vector>

namespace kmcts {

/// What the grid knows about a run that the run itself does not: its configuration's name and
/// the overrides that make it. Empty for a run outside a grid.
struct RunHtmlContext {
  std::string config;
  std::vector<std::string> overrides;
  std::string grid_report;  // a link back to the grid report (relative), if any
};

/// The page of the run in RUN_DIR. InputError if RUN_DIR is not a run. Without Graphviz's dot
/// the tree section says so and holds the DOT text instead.
std::string run_html(const std::filesystem::path& run_dir, const RunHtmlContext& context = {});

/// Writes run_html(...) to `file` (parents created).
void write_run_html(const std::filesystem::path& run_dir, const std::filesystem::path& file,
                    const RunHtmlContext& context = {});

/// Text made safe for HTML element content and attribute values.
std::string html_escape(const std::string& text);

}  // namespace kmcts
