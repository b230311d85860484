#include "search/canonical.hpp"

#include <cctype>

#include "core/hash.hpp"

namespace kmcts {

std::string canonical_source(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  // Whitespace runs become one newline if they held one (preprocessor lines end at
  // newlines, so they stay significant), else one space.
  enum { none, space, newline } pending = none;
  auto emit = [&](char c) {
    if (pending != none && !out.empty()) out.push_back(pending == newline ? '\n' : ' ');
    pending = none;
    out.push_back(c);
  };
  auto mark = [&](char c) {
    if (c == '\n') pending = newline;
    else if (pending == none) pending = space;
  };
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c == '/' && i + 1 < s.size() && s[i + 1] == '/') {  // line comment
      while (i < s.size() && s[i] != '\n') ++i;
    } else if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {  // block comment
      size_t end = s.find("*/", i + 2);
      i = end == std::string_view::npos ? s.size() : end + 2;
      mark(' ');
    } else if (c == '"' || c == '\'') {  // literal: copied verbatim, escapes included
      emit(c);
      ++i;
      while (i < s.size() && s[i] != c) {
        if (s[i] == '\\' && i + 1 < s.size()) out.push_back(s[i++]);
        out.push_back(s[i++]);
      }
      if (i < s.size()) out.push_back(s[i++]);
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      mark(c);
      ++i;
    } else {
      emit(c);
      ++i;
    }
  }
  return out;
}

std::string canonical_hash(std::string_view source) { return sha256_hex(canonical_source(source)); }

}  // namespace kmcts
