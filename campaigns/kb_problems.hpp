#pragma once
// The problems of a KernelBench level in a user's checkout, and the --problems selection.
#include <filesystem>
#include <string>
#include <vector>

namespace kmcts {

struct KbProblemFile {
  int number = 0;        // the file name's leading number (KernelBench's problem id)
  std::string name;      // the file's stem, e.g. "19_ReLU"
  std::filesystem::path path;
};

/// The level's problem files, by number: KB_ROOT/KernelBench/levelN/*.py (a checkout) or
/// KB_ROOT/levelN/*.py. Files without a leading "<number>_" are skipped. InputError naming the
/// folders tried when neither exists or it holds no problem.
std::vector<KbProblemFile> discover_level(const std::filesystem::path& kb_root, int level);

/// `spec`: "" (all), or comma-separated items, each a number, a range "a-b", or a name (the
/// file stem, or the stem without its number). InputError naming every item that matches nothing.
std::vector<KbProblemFile> select_problems(const std::vector<KbProblemFile>& all, const std::string& spec);

}  // namespace kmcts
