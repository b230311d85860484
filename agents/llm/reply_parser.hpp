#pragma once
// Reading what models write. Replies are messy: prose around the code, several code blocks
// (a sketch, then the real file), an unterminated block when the reply hit its token limit,
// plans as numbered lists, bullets or bold headings, priors as [0.4], (p=0.4) or 40%.
#include <optional>
#include <string>
#include <vector>

namespace kmcts::llm {

struct CodeBlock {
  std::string language;  // the fence's tag, e.g. "cpp" ("" if none)
  std::string code;
};
/// Every complete fenced block (```lang ... ```), in order; an unterminated one is left out.
std::vector<CodeBlock> code_blocks(const std::string& text);

/// The last complete fenced code block (```lang ... ```) tagged as C, C++ or CUDA (or untagged);
/// for problems of kind "kernelbench", tagged as Python (or untagged). A ```json or ```bash
/// block is never the kernel. nullopt if the reply has no such complete block.
std::optional<std::string> extract_code(const std::string& reply, const std::string& kind = "");

struct ParsedPlan {
  std::string text;
  double prior = 0;  // normalised: the plans' priors sum to 1
};

/// What a reply that could not be used said, for its error: its first `max_chars` characters on
/// one line (newlines shown as \n), quoted, with its length when cut: `'Sure! Here is...' (4210
/// characters)`.
std::string reply_excerpt(const std::string& reply, size_t max_chars = 160);

/// Up to `max_plans` distinct plans (case- and whitespace-insensitive) from list items:
/// "1. [0.4] text", "2) (p=0.3) text", "- text", "* **Title**: text", "3. text (40%)".
/// Missing priors count as the mean of the given ones (1 if none); then all are normalised.
std::vector<ParsedPlan> parse_plans(const std::string& reply, int max_plans);

}  // namespace kmcts::llm
