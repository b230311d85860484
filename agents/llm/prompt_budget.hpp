#pragma once
// The prompt's budget (issue 30, item 6): every section a template fills ({{name}}) has a cap in
// characters, and a section over it is cut where the cut costs least: a source or a log keeps its
// head and its tail around a line that says how much went ("[... 212 lines cut ...]"); a history
// of steps keeps its latest steps. The caps are defaults per section (default_section_caps),
// which agents.llm.prompt_caps overrides ("parent_source=40000,tried=4000"). And the prompt's size
// in tokens is estimated before it is sent (estimate_tokens), to be stored with the call beside
// the count the provider reports.
#include <cstddef>
#include <map>
#include <string>
#include <string_view>

namespace kmcts {
class Config;
}

namespace kmcts::llm {

struct SectionCap {
  size_t chars = 0;
  bool keep_tail_only = false;  // a history: the latest steps matter most
};

/// The shipped caps, by placeholder name (sections not named are not capped).
std::map<std::string, SectionCap> default_section_caps();
/// The defaults with agents.llm.prompt_caps applied; InputError on a malformed entry.
std::map<std::string, SectionCap> section_caps(const Config& c);

/// `text` within `cap` characters (see above); unchanged when it fits.
std::string cap_section(const std::string& text, const SectionCap& cap);
/// Every value of `values` that has a cap, capped.
void cap_sections(std::map<std::string, std::string>& values, const std::map<std::string, SectionCap>& caps);

/// Tokens `text` takes in a BPE tokenizer of today's models, estimated without one: a run of
/// letters counts one token per 5 letters begun (a common word is one token, an identifier two
/// or three), a run of digits one per 3, a run of symbols one per 2 begun (one symbol just
/// before a word goes with it: ".x"), and spaces are free (they join the next piece). Not checked against a real tokenizer here (none is
/// installed); the provider's own count is stored beside it. A budget, not a bill.
size_t estimate_tokens(std::string_view text);

}  // namespace kmcts::llm
