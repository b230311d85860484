#pragma once
// Small text helpers for turning tool output into one-line messages.
#include <string>

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
