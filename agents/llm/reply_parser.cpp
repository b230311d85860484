#include "agents/llm/reply_parser.hpp"

#include <algorithm>
#include <cctype>
#include <regex>
#include <set>
#include <sstream>

namespace kmcts::llm {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t\r\n"), b = s.find_last_not_of(" \t\r\n");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

bool code_language(const std::string& tag, const std::string& kind) {
  static const std::set<std::string> kernel = {"", "c", "cc", "cpp", "c++", "cxx", "h", "hpp", "cuda", "cu"};
  static const std::set<std::string> python = {"", "python", "py", "python3"};
  return (kind == "kernelbench" ? python : kernel).count(lower(trim(tag))) != 0;
}

}  // namespace

std::vector<CodeBlock> code_blocks(const std::string& text) {
  std::vector<CodeBlock> out;
  std::istringstream in(text);
  std::string line;
  std::optional<CodeBlock> open;
  while (std::getline(in, line)) {
    std::string t = trim(line);
    if (!open && t.rfind("```", 0) == 0) {
      open = CodeBlock{t.substr(3), ""};
    } else if (open && t == "```") {
      out.push_back(std::move(*open));  // a complete block
      open.reset();
    } else if (open) {
      open->code += line + "\n";
    }
  }
  return out;
}

std::optional<std::string> extract_code(const std::string& reply, const std::string& kind) {
  std::optional<std::string> best;
  for (auto& block : code_blocks(reply))
    if (code_language(block.language, kind)) best = std::move(block.code);
  return best;
}

std::vector<ParsedPlan> parse_plans(const std::string& reply, int max_plans) {
  // A list item: a number with . or ), or a bullet; then the rest of the line.
  static const std::regex item(R"(^\s*(?:\d+\s*[.):]|[-*+•])\s+(.*\S)\s*$)");
  static const std::regex bracket(R"(^\[\s*(?:p(?:rior)?\s*[=:]?\s*)?([0-9]*\.?[0-9]+)\s*(%?)\s*\]\s*)", std::regex::icase);
  static const std::regex paren(R"(^\(\s*(?:p(?:rior)?\s*[=:]?\s*)?([0-9]*\.?[0-9]+)\s*(%?)\s*\)\s*)", std::regex::icase);
  static const std::regex trailing(R"(\s*[\[(]\s*(?:p(?:rior)?\s*[=:]?\s*)?([0-9]*\.?[0-9]+)\s*(%?)\s*[\])]\s*$)", std::regex::icase);
  std::vector<ParsedPlan> plans;
  std::vector<bool> has_prior;
  std::set<std::string> seen;
  std::istringstream in(reply);
  bool in_code = false;
  for (std::string line; std::getline(in, line) && static_cast<int>(plans.size()) < max_plans;) {
    if (trim(line).rfind("```", 0) == 0) in_code = !in_code;
    std::smatch m;
    if (in_code || !std::regex_match(line, m, item)) continue;
    std::string text = m[1];
    std::optional<double> prior;
    auto take = [&](const std::regex& re, bool at_end) {
      std::smatch p;
      if (prior || !std::regex_search(text, p, re)) return;
      double v = std::stod(p[1]);
      if (p[2] == "%") v /= 100;
      prior = v;
      text = at_end ? text.substr(0, static_cast<size_t>(p.position(0))) : text.substr(static_cast<size_t>(p.length(0)));
    };
    take(bracket, false);
    take(paren, false);
    take(trailing, true);
    // "**Title**: text" and "__Title__ - text" read as one sentence without the bold markup
    // (a lone '*' stays: "2.0f * x[i]" is code, not markup).
    for (const char* bold : {"**", "__"})
      for (size_t at = text.find(bold); at != std::string::npos; at = text.find(bold, at)) text.erase(at, 2);
    text = trim(text);
    std::string key;
    for (char c : lower(text))
      if (!std::isspace(static_cast<unsigned char>(c))) key += c;
    if (text.empty() || !seen.insert(key).second) continue;
    plans.push_back({text, prior.value_or(0)});
    has_prior.push_back(prior.has_value() && *prior > 0);
  }
  double sum = 0;
  int given = 0;
  for (size_t i = 0; i < plans.size(); ++i)
    if (has_prior[i]) sum += plans[i].prior, ++given;
  const double fill = given ? sum / given : 1.0;
  double total = 0;
  for (size_t i = 0; i < plans.size(); ++i) {
    if (!has_prior[i]) plans[i].prior = fill;
    total += plans[i].prior;
  }
  for (auto& p : plans) p.prior /= total;
  return plans;
}

std::string reply_excerpt(const std::string& reply, size_t max_chars) {
  std::string one_line;
  for (char c : reply.substr(0, max_chars)) {
    if (c == '\n') one_line += "\\n";
    else if (c == '\r' || c == '\t') one_line += ' ';
    else one_line += c;
  }
  if (reply.empty()) return "an empty reply";
  return "'" + one_line + (reply.size() > max_chars ? "...' (" + std::to_string(reply.size()) + " characters)" : "'");
}

}  // namespace kmcts::llm
