#include "reports/report_folder.hpp"

#include <fmt/format.h>

#include "core/files.hpp"
#include "reports/plots.hpp"
#include "reports/report_format.hpp"
#include "reports/run_html.hpp"

namespace kmcts {
namespace fs = std::filesystem;

ReportFolderResult write_report_folder(const GridData& grid, const GridReport& report, const fs::path& dir,
                                       bool run_pages, const std::function<void(const std::string&)>& progress) {
  auto say = [&](const std::string& line) {
    if (progress) progress(line);
  };
  fs::create_directories(dir);
  ReportFolderResult result;
  say(fmt::format("plots -> {}", dir.string()));
  const PlotResult plots = write_plots(report, dir);
  result.figures = static_cast<int>(plots.figures.size());
  result.plot_message = plots.message;
  write_file_atomic(dir / "report.md", report_markdown(report, plots.figures));
  write_file_atomic(dir / "report.csv", report_csv(report));
  write_file_atomic(dir / "report.json", report_json(report).dump(2) + "\n");
  if (!run_pages) return result;
  std::map<std::string, const AblationConfigRow*> configs;
  for (const AblationConfigRow& c : grid.config_rows) configs[c.config] = &c;
  for (const GridRun& run : grid.runs) {
    RunHtmlContext context;
    context.config = run.row.config;
    if (configs.count(run.row.config)) context.overrides = configs.at(run.row.config)->overrides;
    context.grid_report = "../report.md";
    write_run_html(run.dir, dir / "runs" / (run.row.run_id + ".html"), context);
    ++result.run_pages;
    if (result.run_pages % 10 == 0) say(fmt::format("run pages: {}/{}", result.run_pages, grid.runs.size()));
  }
  return result;
}

}  // namespace kmcts
