#include "agents/llm/prompt.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"
#include "core/install_paths.hpp"

#ifndef KMCTS_PROMPT_DIR
#define KMCTS_PROMPT_DIR "configs/prompts"
#endif

namespace kmcts::llm {

namespace {

// Calls f(name, begin, end) for each {{name}} in text (begin/end: the braces included).
template <class F>
void scan(const std::string& text, F f) {
  for (size_t at = text.find("{{"); at != std::string::npos; at = text.find("{{", at + 2)) {
    size_t close = text.find("}}", at + 2);
    if (close == std::string::npos) return;
    std::string name = text.substr(at + 2, close - at - 2);
    if (name.empty() || name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos) continue;
    f(name, at, close + 2);
  }
}

}  // namespace

PromptTemplate PromptTemplate::parse(const std::string& text, const std::string& origin, const std::set<std::string>& known,
                                     const std::set<std::string>& required) {
  PromptTemplate t;
  t.origin_ = origin;
  t.text_ = text;
  scan(text, [&](const std::string& name, size_t, size_t) {
    if (!known.count(name))
      throw InputError(fmt::format("{}: unknown placeholder {{{{{}}}}} (this role provides: {})", origin, name, fmt::join(known, ", ")));
    t.used_.insert(name);
  });
  for (const auto& name : required)
    if (!t.used_.count(name))
      throw InputError(fmt::format("{}: the template never uses {{{{{}}}}}, which this role needs", origin, name));
  return t;
}

PromptTemplate PromptTemplate::load(const std::filesystem::path& file, const std::set<std::string>& known,
                                    const std::set<std::string>& required) {
  std::ifstream in(file);
  if (!in) throw InputError(fmt::format("{}: cannot read the prompt template", file.string()));
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse(ss.str(), file.string(), known, required);
}

std::string PromptTemplate::render(const std::map<std::string, std::string>& values) const {
  std::string out;
  size_t last = 0;
  scan(text_, [&](const std::string& name, size_t begin, size_t end) {
    auto it = values.find(name);
    if (it == values.end()) throw std::logic_error(fmt::format("{}: no value for {{{{{}}}}}", origin_, name));
    out.append(text_, last, begin - last);
    out += it->second;
    last = end;
  });
  out.append(text_, last, std::string::npos);
  return out;
}

std::filesystem::path default_prompt_dir() { return data_dir("prompts", KMCTS_PROMPT_DIR); }

}  // namespace kmcts::llm
