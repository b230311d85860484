#pragma once
// Small text helpers for turning tool output into one-line messages.
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

namespace kmcts {

/// Everything before the first newline (the whole text if it has none).
inline std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace kmcts

namespace kmcts {

/// The last non-empty line (trailing newlines and blanks ignored).
inline std::string last_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
  const auto cut = text.rfind('\n');
  return cut == std::string::npos ? text : text.substr(cut + 1);
}

}  // namespace kmcts

namespace kmcts {

/// One line of CSV as tools write it (ncu, rocprofv3): cells split on commas outside double
/// quotes, the quotes removed ("\"f(int, int)\",3" -> {"f(int, int)", "3"}); a doubled quote
/// inside quotes stands for one.
inline std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '"' && quoted && i + 1 < line.size() && line[i + 1] == '"') cells.back() += '"', ++i;
    else if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) cells.emplace_back();
    else cells.back() += c;
  }
  return cells;
}

/// `text` with ASCII letters in lower case (header names, tags, error words).
inline std::string to_lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

/// `text` without leading and trailing blanks (spaces, tabs, CR, LF).
inline std::string trim(const std::string& text) {
  const size_t a = text.find_first_not_of(" \t\r\n");
  return a == std::string::npos ? std::string() : text.substr(a, text.find_last_not_of(" \t\r\n") - a + 1);
}

/// The items of a comma-separated list, each with surrounding blanks removed; empty items
/// dropped ("0, 1,,2" -> {"0", "1", "2"}).
inline std::vector<std::string> split_list(const std::string& text, char separator = ',') {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(separator, start);
    if (end == std::string::npos) end = text.size();
    const size_t a = text.find_first_not_of(" \t", start);
    if (a != std::string::npos && a < end) out.push_back(text.substr(a, text.find_last_not_of(" \t", end - 1) - a + 1));
    start = end + 1;
  }
  return out;
}

}  // namespace kmcts
