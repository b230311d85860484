#include "campaigns/kb_problems.hpp"

#include <algorithm>
#include <charconv>
#include <optional>
#include <tuple>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"
#include "core/text.hpp"

namespace kmcts {

namespace fs = std::filesystem;

namespace {

std::optional<int> leading_number(const std::string& stem) {
  const size_t underscore = stem.find('_');
  if (underscore == 0 || underscore == std::string::npos) return std::nullopt;
  int n = 0;
  auto [end, ec] = std::from_chars(stem.data(), stem.data() + underscore, n);
  if (ec != std::errc() || end != stem.data() + underscore) return std::nullopt;
  return n;
}

std::optional<int> whole_number(const std::string& s) {
  int n = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return n;
}

}  // namespace

std::vector<KbProblemFile> discover_level(const fs::path& kb_root, int level) {
  const std::string folder = "level" + std::to_string(level);
  const std::vector<fs::path> tried = {kb_root / "KernelBench" / folder, kb_root / folder};
  for (const fs::path& dir : tried) {
    if (!fs::is_directory(dir)) continue;
    std::vector<KbProblemFile> files;
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (!entry.is_regular_file() || entry.path().extension() != ".py") continue;
      const std::string stem = entry.path().stem().string();
      if (auto n = leading_number(stem)) files.push_back({*n, stem, entry.path()});
    }
    if (files.empty()) throw InputError(fmt::format("{} holds no KernelBench problem files (<number>_<name>.py)", dir.string()));
    std::sort(files.begin(), files.end(),
              [](const auto& a, const auto& b) { return std::tie(a.number, a.name) < std::tie(b.number, b.name); });
    return files;
  }
  throw InputError(fmt::format("no level {} under --kb-root {}: tried {} and {}", level, kb_root.string(),
                               tried[0].string(), tried[1].string()));
}

std::vector<KbProblemFile> select_problems(const std::vector<KbProblemFile>& all, const std::string& spec) {
  const std::vector<std::string> items = split_list(spec);
  if (items.empty()) return all;
  std::set<std::string> chosen;
  std::vector<std::string> unmatched;
  for (const std::string& item : items) {
    const size_t dash = item.find('-', 1);
    std::optional<int> lo = whole_number(item), hi = lo;
    if (!lo && dash != std::string::npos) {
      const auto bounds = split_list(item, '-');
      lo = bounds.size() == 2 ? whole_number(bounds[0]) : std::nullopt;
      hi = bounds.size() == 2 ? whole_number(bounds[1]) : std::nullopt;
      if (!lo || !hi) lo.reset();
    }
    bool matched = false;
    for (const auto& f : all) {
      const bool hit = lo ? (f.number >= *lo && f.number <= *hi)
                          : (f.name == item || f.name.substr(f.name.find('_') + 1) == item);
      if (hit) chosen.insert(f.name), matched = true;
    }
    if (!matched) unmatched.push_back(item);
  }
  if (!unmatched.empty())
    throw InputError(fmt::format("--problems: no problem of the level matches {}", fmt::join(unmatched, ", ")));
  std::vector<KbProblemFile> out;
  for (const auto& f : all)
    if (chosen.count(f.name)) out.push_back(f);
  return out;
}

}  // namespace kmcts
