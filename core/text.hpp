#pragma once
// Small text helpers for turning tool output into one-line messages.
#include <string>

namespace kmcts {

/// Everything before the first newline (the whole text if it has none).
inline std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace kmcts
