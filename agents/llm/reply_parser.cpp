#include "agents/llm/reply_parser.hpp"

#include <algorithm>
#include <cctype>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/text.hpp"

namespace kmcts::llm {

namespace {


std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t\r\n"), b = s.find_last_not_of(" \t\r\n");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

bool code_language(const std::string& tag, const std::string& kind) {
  static const std::set<std::string> kernel = {"", "c", "cc", "cpp", "c++", "cxx", "h", "hpp", "cuda", "cu"};
  static const std::set<std::string> python = {"", "python", "py", "python3"};
  return (kind == "kernelbench" ? python : kernel).count(to_lower(trim(tag))) != 0;
}

// The reply without a reasoning model's visible thinking (<think>...</think>, <thinking>...):
// drafts and brainstormed lists there are not the answer. An unclosed tag drops the rest.
std::string without_thinking(std::string text) {
  for (const char* tag : {"think", "thinking"}) {
    const std::string open = std::string("<") + tag + ">", close = std::string("</") + tag + ">";
    // A server that strips the opening tag (DeepSeek-R1 through vLLM) leaves a lone closing one:
    // everything before it was thinking.
    const size_t lone = text.find(close);
    if (lone != std::string::npos && text.rfind(open, lone) == std::string::npos) text.erase(0, lone + close.size());
    for (size_t at = text.find(open); at != std::string::npos; at = text.find(open, at)) {
      const size_t end = text.find(close, at);
      text.erase(at, end == std::string::npos ? std::string::npos : end + close.size() - at);
    }
  }
  return text;
}

// Plans given as a JSON list (in a ```json block or as the whole reply): strings, or objects
// with plan/text/description/title and prior/probability/confidence/p.
std::vector<std::pair<std::string, std::optional<double>>> json_plans(const std::string& reply,
                                                                      const std::vector<CodeBlock>& blocks) {
  std::vector<std::string> sources;
  for (const auto& b : blocks)
    if (to_lower(trim(b.language)) == "json") sources.push_back(b.code);
  if (trim(reply).rfind('[', 0) == 0) sources.push_back(reply);
  std::vector<std::pair<std::string, std::optional<double>>> out;
  for (const auto& source : sources) {
    const nlohmann::json j = nlohmann::json::parse(source, nullptr, false);
    if (!j.is_array()) continue;
    for (const auto& e : j) {
      if (e.is_string()) out.emplace_back(e.get<std::string>(), std::nullopt);
      if (!e.is_object()) continue;
      std::string text;
      for (const char* key : {"plan", "text", "description", "title"})
        if (text.empty() && e.contains(key) && e[key].is_string()) text = e[key].get<std::string>();
      std::optional<double> prior;
      for (const char* key : {"prior", "probability", "confidence", "p"})
        if (!prior && e.contains(key) && e[key].is_number()) prior = e[key].get<double>();
      if (!text.empty()) out.emplace_back(text, prior);
    }
    if (!out.empty()) break;
  }
  return out;
}

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Where the "__" opened at `open` closes as bold markup, or npos: a closer follows a non-space,
// is not followed by a word character, and what it encloses has a space (two words or more) and
// no other "__" or backtick. So __expf, __restrict__ and "__ldg with __restrict__" stay.
size_t bold_close(const std::string& text, size_t open) {
  if (open > 0 && !std::isspace(static_cast<unsigned char>(text[open - 1]))) return std::string::npos;
  if (open + 2 >= text.size() || std::isspace(static_cast<unsigned char>(text[open + 2]))) return std::string::npos;
  for (size_t at = text.find("__", open + 2); at != std::string::npos; at = text.find("__", at + 1)) {
    if (std::isspace(static_cast<unsigned char>(text[at - 1])) || (at + 2 < text.size() && word_char(text[at + 2])))
      continue;
    const std::string inside = text.substr(open + 2, at - open - 2);
    const bool plain = inside.find("__") == std::string::npos && inside.find('`') == std::string::npos;
    return plain && inside.find(' ') != std::string::npos ? at : std::string::npos;
  }
  return std::string::npos;
}

// "**Title**: text" and "__Two words__ - text" read as one sentence without the bold markup.
// Code stays as written: nothing inside `backticks` is touched, a lone '*' stays ("2.0f * x[i]"),
// and so do identifiers (bold_close()).
std::string without_bold(const std::string& text) {
  std::string out;
  bool in_code = false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '`') in_code = !in_code;
    if (!in_code && text.compare(i, 2, "**") == 0) {
      ++i;
      continue;
    }
    if (!in_code && text.compare(i, 2, "__") == 0) {
      if (const size_t close = bold_close(text, i); close != std::string::npos) {
        out += text.substr(i + 2, close - i - 2);
        i = close + 1;
        continue;
      }
    }
    out += text[i];
  }
  return out;
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
  // The last eligible block, preferring one that holds ModelNew for KernelBench (a usage
  // example or a sketch may come after it).
  std::optional<std::string> best, with_model;
  for (auto& block : code_blocks(without_thinking(reply))) {
    if (!code_language(block.language, kind)) continue;
    if (kind == "kernelbench" && block.code.find("class ModelNew") != std::string::npos) with_model = block.code;
    best = std::move(block.code);
  }
  return with_model ? with_model : best;
}

std::vector<ParsedPlan> parse_plans(const std::string& raw_reply, int max_plans) {
  // A list item: a number with . or ), or a bullet; then the rest of the line. A heading that
  // numbers a plan ("### Plan 2: text", "## 3. text") counts as an item too.
  static const std::regex item(R"(^(\s*)(?:\d+\s*[.):]|[-*+•])\s+(.*\S)\s*$)");
  static const std::regex heading(
      R"(^()#{1,6}\s*(?:(?:plan|idea|option|proposal|approach|step)\s*)?\d+\s*[:.)\-\xE2\x80\x93\x94]*\s*(.*\S)\s*$)",
      std::regex::icase);
  // A prior at the item's start or end, or anywhere when it cannot be code: [0.4], (p=0.3),
  // [prior: 40%], (20%), but not out[0] or dim (1).
  static const std::regex prior_edge(R"(^\s*[\[(]\s*(?:p(?:rior)?\s*[=:]?\s*)?([0-9]*\.?[0-9]+)\s*(%?)\s*[\])]|\s*[\[(]\s*(?:p(?:rior)?\s*[=:]?\s*)?([0-9]*\.?[0-9]+)\s*(%?)\s*[\])][.;,]?\s*$)",
                                      std::regex::icase);
  static const std::regex prior_explicit(
      R"(\s*[\[(]\s*(?:(?:p|prior)\s*[=:]\s*([0-9]*\.?[0-9]+)\s*(%?)|([0-9]*\.?[0-9]+)\s*(%)|(0?\.[0-9]+)())\s*[\])])",
      std::regex::icase);
  const std::string reply = without_thinking(raw_reply);
  std::vector<std::pair<std::string, std::optional<double>>> found = json_plans(reply, code_blocks(reply));
  if (found.empty()) {
    // List items at their shallowest indentation only: sub-bullets are a plan's details.
    struct Item {
      int kind;  // 0 numbered, 1 bullet, 2 numbered heading
      size_t indent;
      std::string text;
    };
    std::vector<Item> items;
    std::istringstream in(reply);
    bool in_code = false;
    bool open_item = false;  // the last line was a list item or its continuation
    for (std::string line; std::getline(in, line);) {
      if (trim(line).rfind("```", 0) == 0) in_code = !in_code;
      std::smatch m;
      if (in_code) {
        open_item = false;
        continue;
      }
      if (std::regex_match(line, m, item)) {
        const std::string marker = trim(line).substr(0, 1);
        items.push_back({std::isdigit(static_cast<unsigned char>(marker[0])) ? 0 : 1, static_cast<size_t>(m[1].length()), m[2]});
        open_item = true;
      } else if (std::regex_match(line, m, heading)) {
        items.push_back({2, 0, m[2]});
        open_item = false;
      } else if (open_item && !trim(line).empty() &&
                 line.find_first_not_of(" \t") > items.back().indent) {
        // A hard-wrapped item: its indented next line continues its text.
        items.back().text += " " + trim(line);
      } else {
        open_item = false;
      }
    }
    // List items over numbered headings ("## 1. Analysis" above the list); bullets that all come
    // before the first numbered item are a preamble (facts, not plans); then the shallowest level.
    const bool any_list = std::any_of(items.begin(), items.end(), [](const Item& it) { return it.kind != 2; });
    const auto first_numbered =
        std::find_if(items.begin(), items.end(), [](const Item& it) { return it.kind == 0; });
    const bool preamble = first_numbered != items.end() &&
                          std::none_of(first_numbered, items.end(), [](const Item& it) { return it.kind == 1; });
    auto keep = [&](const Item& it) { return any_list ? it.kind != 2 && !(preamble && it.kind == 1) : true; };
    size_t level = std::string::npos;
    for (const auto& it : items)
      if (keep(it)) level = std::min(level, it.indent);
    for (const auto& it : items)
      if (keep(it) && it.indent == level) found.emplace_back(it.text, std::nullopt);
  }
  std::vector<ParsedPlan> plans;
  std::vector<bool> has_prior;
  std::set<std::string> seen;
  for (auto& [found_text, found_prior] : found) {
    if (static_cast<int>(plans.size()) >= max_plans) break;
    std::string text = found_text;
    std::optional<double> prior = found_prior;
    std::smatch p;
    for (const std::regex* re : {&prior_edge, &prior_explicit}) {
      if (prior || !std::regex_search(text, p, *re)) continue;
      // The first group pair that matched holds the number and its percent sign.
      for (size_t g = 1; g + 1 < p.size(); g += 2)
        if (p[g].matched) {
          double v = std::stod(p[g]);
          if (p[g + 1] == "%") v /= 100;
          prior = v;
          break;
        }
      const bool at_end = static_cast<size_t>(p.position(0) + p.length(0)) == text.size();
      std::string tail = at_end ? std::string(trim(p.str(0)).back() == '.' ? "." : "") : "";
      text.erase(static_cast<size_t>(p.position(0)), static_cast<size_t>(p.length(0)));
      text += tail;
      // What removing it left: doubled spaces, a space before punctuation.
      for (size_t at = text.find("  "); at != std::string::npos; at = text.find("  ")) text.erase(at, 1);
      for (const char* gap : {" :", " .", " ,", " ;"})
        for (size_t at = text.find(gap); at != std::string::npos; at = text.find(gap)) text.erase(at, 1);
    }
    text = trim(without_bold(text));
    std::string key;
    for (char c : to_lower(text))
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
