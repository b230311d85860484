#pragma once
// The subcommands of `kmcts`. Each registers its options on the CLI11 app and returns
// the callback that runs it; a callback returns the process exit code.
#include <functional>
#include <string>

#include <CLI/CLI.hpp>

namespace kmcts::app {

using Command = std::function<int()>;

/// The whole command line as typed (recorded in each run).
const std::string& invocation();

Command add_run(CLI::App& root);
Command add_show(CLI::App& root);
Command add_export(CLI::App& root);
Command add_config(CLI::App& root);
Command add_doctor(CLI::App& root);
Command add_replay(CLI::App& root);
Command add_resume(CLI::App& root);
Command add_mock_llm(CLI::App& root);
Command add_measure(CLI::App& root);
Command add_kernelbench(CLI::App& root);
Command add_report(CLI::App& root);
Command add_ablate(CLI::App& root);
Command add_memory(CLI::App& root);

}  // namespace kmcts::app
