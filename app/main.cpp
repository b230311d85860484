// kmcts: agentic kernel search. Exit codes: 0 success, 1 the run failed, 2 bad usage or input.
#include <cstdio>
#include <map>
#include <string>

#include <fmt/format.h>

#include "app/commands.hpp"
#include "core/error.hpp"
#include "hardware/confine.hpp"

namespace {
std::string g_invocation;
}

const std::string& kmcts::app::invocation() { return g_invocation; }

int main(int argc, char** argv) {
  // Candidate processes of the same uid must not read kmcts's environment (the user's API keys)
  // or memory through /proc (hardware/confine.hpp).
  kmcts::protect_this_process();
  for (int i = 0; i < argc; ++i) g_invocation += (i ? " " : "") + std::string(argv[i]);
  CLI::App app{"kmcts: Monte Carlo tree search over kernel variants, scored by measured speedup", "kmcts"};
  app.set_version_flag("--version", std::string("kmcts ") + KMCTS_VERSION);
  app.require_subcommand(1);
  std::map<CLI::App*, kmcts::app::Command> commands;
  auto add = [&](kmcts::app::Command (*adder)(CLI::App&)) {
    size_t before = app.get_subcommands({}).size();
    kmcts::app::Command command = adder(app);
    commands[app.get_subcommands({})[before]] = std::move(command);
  };
  add(kmcts::app::add_run);
  add(kmcts::app::add_show);
  add(kmcts::app::add_export);
  add(kmcts::app::add_config);
  add(kmcts::app::add_resume);
  add(kmcts::app::add_replay);
  add(kmcts::app::add_doctor);
  add(kmcts::app::add_mock_llm);
  add(kmcts::app::add_measure);
  add(kmcts::app::add_kernelbench);
  add(kmcts::app::add_report);
  add(kmcts::app::add_ablate);
  add(kmcts::app::add_memory);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    for (auto& [sub, command] : commands)
      if (sub->parsed()) return command();
  } catch (const kmcts::InputError& e) {
    fmt::print(stderr, "kmcts: error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "kmcts: run failed: {}\n", e.what());
    return 1;
  }
  return 2;
}
