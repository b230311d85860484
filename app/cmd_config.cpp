#include <fmt/format.h>

#include "app/commands.hpp"
#include "core/options.hpp"
#include "search/coordinator.hpp"

namespace kmcts::app {

Command add_config(CLI::App& root) {
  struct Args {
    bool explain = false;
    bool dump = false;
    std::string file;
    std::vector<std::string> sets;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = root.add_subcommand("config", "Explain the options, or validate and print an effective config");
  cmd->add_flag("--explain", args->explain, "List every option with type, default, range and help");
  cmd->add_flag("--dump", args->dump, "Print the effective config (defaults + --config + --set) as JSON");
  cmd->add_option("--config", args->file, "JSON config file to validate");
  cmd->add_option("--set", args->sets, "Override one option: key=value (repeatable)");
  return [args] {
    if (args->explain) {
      fmt::print("{}", explain_options());
      return 0;
    }
    Config config = args->file.empty() ? Config() : Config::from_file(args->file);
    for (const auto& s : args->sets) config.set(s);
    SearchParts::check_names(config);  // what `run` would refuse, refused here too
    fmt::print("{}\n", config.to_json().dump(2));
    return 0;
  };
}

}  // namespace kmcts::app
