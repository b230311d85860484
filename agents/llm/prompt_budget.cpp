#include "agents/llm/prompt_budget.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/options.hpp"
#include "core/text.hpp"

KMCTS_OPTION("agents.llm.prompt_caps", String, "", std::nullopt, std::nullopt,
             "Caps in characters of prompt sections, overriding the defaults (agents/llm/prompt_budget.cpp), as "
             "name=chars pairs: \"parent_source=40000,tried=4000\". A section over its cap keeps its head and tail "
             "(a history its latest steps) and says how much was cut.")

namespace kmcts::llm {

std::map<std::string, SectionCap> default_section_caps() {
  // A source is the work itself: large caps (a KernelBench reference of 600 lines is ~25,000
  // characters). Lists and histories grow with the search: small ones.
  return {{"parent_source", {48000}},      {"failed_source", {48000}},   {"reference_source", {32000}},
          {"problem_description", {6000}}, {"error", {6000}},            {"tried", {6000}},
          {"parent_result", {2000}},       {"parent_history", {3000, true}}, {"best_summary", {3000, true}},
          {"plan", {4000}},                {"hardware", {1000}},            {"profile", {4000}}};
}

std::map<std::string, SectionCap> section_caps(const Config& c) {
  std::map<std::string, SectionCap> caps = default_section_caps();
  for (const std::string& entry : split_list(c.get_string("agents.llm.prompt_caps"))) {
    const size_t eq = entry.find('=');
    size_t used = 0;
    long long chars = -1;
    try {
      if (eq != std::string::npos) chars = std::stoll(entry.substr(eq + 1), &used);
    } catch (const std::exception&) {
      chars = -1;
    }
    if (eq == std::string::npos || eq == 0 || chars < 200 || used != entry.size() - eq - 1)
      throw InputError(fmt::format("agents.llm.prompt_caps: '{}' is not name=chars with chars >= 200", entry));
    caps[entry.substr(0, eq)].chars = static_cast<size_t>(chars);
  }
  return caps;
}

std::string cap_section(const std::string& text, const SectionCap& cap) {
  if (cap.chars == 0 || text.size() <= cap.chars) return text;
  const size_t budget = cap.chars - std::min<size_t>(cap.chars, 64);  // room for the marker line
  auto cut_lines = [&](size_t from, size_t to) { return std::count(text.begin() + from, text.begin() + to, '\n'); };
  if (cap.keep_tail_only) {
    size_t start = text.size() - budget;
    if (const size_t nl = text.find('\n', start); nl != std::string::npos && nl + 1 < text.size()) start = nl + 1;
    return fmt::format("[... {} earlier characters cut ...]\n", start) + text.substr(start);
  }
  // Head two thirds, tail one third, each ending on a line boundary where there is one.
  size_t head = budget * 2 / 3;
  if (const size_t nl = text.rfind('\n', head); nl != std::string::npos && nl > head / 2) head = nl + 1;
  size_t tail = text.size() - (budget - head);
  if (const size_t nl = text.find('\n', tail); nl != std::string::npos && nl + 1 < text.size() && nl < tail + budget / 6)
    tail = nl + 1;
  return text.substr(0, head) + fmt::format("[... {} lines ({} characters) cut ...]\n", cut_lines(head, tail), tail - head) +
         text.substr(tail);
}

void cap_sections(std::map<std::string, std::string>& values, const std::map<std::string, SectionCap>& caps) {
  for (auto& [name, value] : values)
    if (auto it = caps.find(name); it != caps.end()) value = cap_section(value, it->second);
}

size_t estimate_tokens(std::string_view text) {
  size_t tokens = 0;
  size_t i = 0;
  auto is_letter = [](unsigned char ch) { return std::isalpha(ch) || ch >= 0x80 || ch == '_'; };
  while (i < text.size()) {
    const unsigned char ch = static_cast<unsigned char>(text[i]);
    if (std::isspace(ch)) {
      ++i;
      continue;
    }
    size_t j = i;
    if (is_letter(ch)) {
      while (j < text.size() && is_letter(static_cast<unsigned char>(text[j]))) ++j;
      tokens += (j - i + 4) / 5;
    } else if (std::isdigit(ch)) {
      while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
      tokens += (j - i + 2) / 3;
    } else {
      while (j < text.size() && !std::isspace(static_cast<unsigned char>(text[j])) &&
             !is_letter(static_cast<unsigned char>(text[j])) && !std::isdigit(static_cast<unsigned char>(text[j])))
        ++j;
      // Symbols pair up ("->", "();"); one symbol before a word goes with it (".x", "_t", "(n").
      const bool joins_word = j - i == 1 && j < text.size() && is_letter(static_cast<unsigned char>(text[j]));
      tokens += joins_word ? 0 : (j - i + 1) / 2;
    }
    i = j;
  }
  return tokens;
}

}  // namespace kmcts::llm
