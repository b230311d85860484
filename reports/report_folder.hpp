#pragma once
// Everything `kmcts report GRID --plots DIR` writes, in one folder a researcher can open:
//   DIR/report.md, report.csv, report.json   the tables (report.md also shows the figures)
//   DIR/*.png, *.svg, *.gp, data/*.dat       the figures, their scripts and data (plots.hpp)
//   DIR/runs/<run_id>.html                   one page per done run (run_html.hpp)
#include <filesystem>
#include <functional>
#include <string>

#include "reports/grid_data.hpp"
#include "reports/grid_report.hpp"

namespace kmcts {

struct ReportFolderResult {
  int figures = 0;
  int run_pages = 0;
  std::string plot_message;  // when figures could not be drawn (no gnuplot)
};

/// Writes the folder. `run_pages` false skips the per-run pages (they take a Graphviz layout
/// each). `progress` (may be empty) hears one line per stage.
ReportFolderResult write_report_folder(const GridData& grid, const GridReport& report, const std::filesystem::path& dir,
                                       bool run_pages, const std::function<void(const std::string&)>& progress = {});

}  // namespace kmcts
