#include <fstream>

#include <fmt/format.h>

#include "app/commands.hpp"
#include "core/error.hpp"
#include "search/export.hpp"
#include "search/run_lock.hpp"
#include "search/run_state.hpp"
#include "search/run_store.hpp"
#include "search/summary_table.hpp"

namespace kmcts::app {

Command add_show(CLI::App& root) {
  auto run_dir = std::make_shared<std::string>();
  CLI::App* cmd = root.add_subcommand("show", "Print a run's summary again, from its store");
  cmd->add_option("RUN_DIR", *run_dir, "Run directory")->required();
  return [run_dir] {
    auto store = RunStore::open(*run_dir);
    auto summary = run_summary(*store);
    if (!summary)
      throw InputError(fmt::format("run directory '{}' has no summary yet: kmcts process {} is still running it", *run_dir,
                                   folder_holder(*run_dir).value_or("(gone)")));
    fmt::print("{}", format_summary_table(*summary));
    return 0;
  };
}

Command add_export(CLI::App& root) {
  struct Args {
    std::string run_dir;
    std::string format = "json";
    std::string output;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = root.add_subcommand("export", "Write a run's variant graph as JSON, CSV, Graphviz DOT or SVG");
  cmd->add_option("RUN_DIR", args->run_dir, "Run directory")->required();
  cmd->add_option("--format", args->format, "json, csv (one row per node), dot, or svg (needs Graphviz)")
      ->check(CLI::IsMember({"json", "csv", "dot", "svg"}));
  cmd->add_option("-o,--output", args->output, "Output file (default: standard output)");
  return [args] {
    auto store = RunStore::open(args->run_dir);
    const std::string& format = args->format;
    const std::string text = format == "dot"   ? export_dot(*store)
                             : format == "svg" ? render_svg(export_dot(*store))
                             : format == "csv" ? export_csv(*store)
                                               : export_json(*store).dump(2) + "\n";
    if (args->output.empty()) {
      fmt::print("{}", text);
      return 0;
    }
    std::ofstream out(args->output, std::ios::binary);
    if (!out) throw InputError(fmt::format("cannot write '{}'", args->output));
    out << text;
    return 0;
  };
}

}  // namespace kmcts::app
