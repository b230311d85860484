// kmcts memory list|show|export|import: the optimisation archive (search/memory_archive.hpp).
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "app/commands.hpp"
#include "core/error.hpp"
#include "search/memory_archive.hpp"

namespace kmcts::app {
namespace {

struct MemoryArgs {
  std::string path;
  int64_t id = 0;
  std::string file;
};

// One line per entry: id, speedup, problem, hardware, date, the plan's first line.
void print_list(const MemoryArchive& archive) {
  const auto entries = archive.list();
  fmt::print("{} entr{} in {}\n", entries.size(), entries.size() == 1 ? "y" : "ies", archive.file().string());
  for (const MemoryEntry& e : entries) {
    std::string plan = e.plan.substr(0, e.plan.find('\n'));
    if (plan.size() > 60) plan = plan.substr(0, 57) + "...";
    fmt::print("{:>5}  {:>7.3f}x  {:<24} {:<11} {:<24} {}  {}\n", e.id, e.speedup(), e.problem.substr(0, 24), e.kind,
               e.hardware.substr(0, 24), e.created_at.substr(0, 10), plan.empty() ? "(no plan)" : plan);
  }
}

}  // namespace

Command add_memory(CLI::App& root) {
  auto args = std::make_shared<MemoryArgs>();
  CLI::App* cmd = root.add_subcommand("memory", "The optimisation archive: improvements searches found, across runs");
  cmd->require_subcommand(1);
  auto path_option = [&](CLI::App* sub) {
    sub->add_option("--path", args->path, "The archive (default: agents.memory.path's default)");
  };
  CLI::App* list = cmd->add_subcommand("list", "One line per entry: id, speedup over its parent, problem, hardware");
  CLI::App* show = cmd->add_subcommand("show", "One entry whole, as JSON (plan, both sources, medians, interval)");
  show->add_option("ID", args->id, "The entry's id (see list)")->required();
  CLI::App* exp = cmd->add_subcommand("export", "Every entry as JSON Lines, to share");
  exp->add_option("FILE", args->file, "Output file (default: standard output)");
  CLI::App* imp = cmd->add_subcommand("import", "Adds the entries of a JSON Lines file (entries already there are skipped)");
  imp->add_option("FILE", args->file, "A file `kmcts memory export` wrote")->required();
  for (CLI::App* sub : {list, show, exp, imp}) path_option(sub);
  return [args, list, show, exp, imp] {
    MemoryArchive archive(args->path.empty() ? MemoryArchive::default_path() : std::filesystem::path(args->path));
    if (list->parsed()) {
      print_list(archive);
    } else if (show->parsed()) {
      const auto e = archive.get(args->id);
      if (!e) throw InputError(fmt::format("no entry {} in {}", args->id, archive.file().string()));
      fmt::print("{}\n", to_json(*e).dump(2));
    } else if (exp->parsed()) {
      std::ofstream file;
      if (!args->file.empty()) {
        file.open(args->file, std::ios::binary);
        if (!file) throw InputError(fmt::format("cannot write '{}'", args->file));
      }
      std::ostream& out = args->file.empty() ? std::cout : file;
      for (const MemoryEntry& e : archive.list()) out << to_json(e).dump() << '\n';
    } else if (imp->parsed()) {
      std::ifstream in(args->file);
      if (!in) throw InputError(fmt::format("cannot read '{}'", args->file));
      size_t added = 0, skipped = 0, line_no = 0;
      for (std::string line; std::getline(in, line);) {
        ++line_no;
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        const auto j = nlohmann::json::parse(line, nullptr, false);
        if (j.is_discarded()) throw InputError(fmt::format("{}:{}: not JSON", args->file, line_no));
        MemoryEntry e;
        try {
          e = memory_entry_from_json(j);
        } catch (const InputError& err) {
          throw InputError(fmt::format("{}:{}: {}", args->file, line_no, err.what()));
        }
        (archive.add(e) ? added : skipped) += 1;
      }
      fmt::print("{} entr{} added, {} already there ({})\n", added, added == 1 ? "y" : "ies", skipped,
                 archive.file().string());
    }
    return 0;
  };
}

}  // namespace kmcts::app
