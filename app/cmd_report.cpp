#include <fstream>

#include <fmt/format.h>

#include "app/commands.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "reports/grid_data.hpp"
#include "reports/grid_report.hpp"
#include "reports/report_folder.hpp"
#include "reports/report_format.hpp"
#include "reports/run_html.hpp"

namespace kmcts::app {
namespace {

struct ReportArgs {
  std::string dir;
  std::string format = "md";
  std::string output;
  std::string plots;
  std::string html;
  std::string baseline;
  std::string budgets = "10,25,50,100";
  double target = 0.98;
  bool no_run_pages = false;
  bool quiet = false;
};

std::vector<int> parse_budgets(const std::string& text) {
  std::vector<int> out;
  for (const std::string& item : split_list(text)) {
    try {
      size_t used = 0;
      const int b = std::stoi(item, &used);
      if (used != item.size() || b <= 0) throw std::invalid_argument(item);
      out.push_back(b);
    } catch (const std::exception&) {
      throw InputError(fmt::format("--budgets: '{}' is not a positive number of evaluations", item));
    }
  }
  return out;
}

void emit(const std::string& text, const std::string& output) {
  if (output.empty()) {
    fmt::print("{}", text);
    return;
  }
  std::ofstream out(output, std::ios::binary);
  if (!out) throw InputError(fmt::format("cannot write '{}'", output));
  out << text;
}

int run_report(const ReportArgs& a) {
  if (!is_grid_dir(a.dir)) {
    // A single run: its HTML page.
    if (a.html.empty())
      throw InputError(fmt::format("'{}' is not a grid folder (no index.sqlite); for one run, give --html FILE", a.dir));
    write_run_html(a.dir, a.html);
    if (!a.quiet) fmt::print(stderr, "wrote {}\n", a.html);
    return 0;
  }
  if (!a.html.empty()) throw InputError("--html is for one run directory; a grid writes its run pages with --plots DIR");
  ReportSettings settings;
  settings.budgets = parse_budgets(a.budgets);
  settings.target_fraction = a.target;
  const GridData grid = load_grid(a.dir, a.baseline);
  const GridReport report = compute_grid_report(grid, settings);
  const std::string text = a.format == "csv"    ? report_csv(report)
                           : a.format == "json" ? report_json(report).dump(2) + "\n"
                                                : report_markdown(report);
  emit(text, a.output);
  if (!a.plots.empty()) {
    auto progress = [&](const std::string& line) {
      if (!a.quiet) fmt::print(stderr, "report: {}\n", line);
    };
    const ReportFolderResult r = write_report_folder(grid, report, a.plots, !a.no_run_pages, progress);
    if (!r.plot_message.empty()) fmt::print(stderr, "kmcts: warning: {}\n", r.plot_message);
    if (!a.quiet)
      fmt::print(stderr, "report: wrote {}/report.md, {} figures, {} run pages\n", a.plots, r.figures, r.run_pages);
  }
  return 0;
}

}  // namespace

Command add_report(CLI::App& root) {
  auto a = std::make_shared<ReportArgs>();
  CLI::App* cmd = root.add_subcommand(
      "report", "Tables (and with --plots, figures and run pages) of an ablation grid, or one run's HTML page");
  cmd->add_option("DIR", a->dir, "Grid folder (kmcts ablate --out), or a run directory with --html")->required();
  cmd->add_option("--format", a->format, "Tables as md, csv or json")
      ->check(CLI::IsMember({"md", "csv", "json"}))
      ->capture_default_str();
  cmd->add_option("-o,--output", a->output, "Write the tables here (default: standard output)");
  cmd->add_option("--plots", a->plots,
                  "Report folder: report.md/csv/json, figures (PNG, SVG, gnuplot scripts and data), runs/<run_id>.html");
  cmd->add_option("--baseline", a->baseline, "Configuration to compare against (default: the grid's baseline)");
  cmd->add_option("--budgets", a->budgets, "Evaluation counts for best@B columns (those above the grid budget are dropped)")
      ->capture_default_str();
  cmd->add_option("--target", a->target, "Fraction of the best known speedup for the evals-to-target column")
      ->check(CLI::Range(0.0, 1.0).description("in (0, 1]"))
      ->capture_default_str();
  cmd->add_option("--html", a->html, "For a run directory: write its self-contained HTML page here");
  cmd->add_flag("--no-run-pages", a->no_run_pages, "With --plots: skip the per-run HTML pages");
  cmd->add_flag("--quiet", a->quiet, "No progress on stderr");
  return [a] { return run_report(*a); };
}

}  // namespace kmcts::app
