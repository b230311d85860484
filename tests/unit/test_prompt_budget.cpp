// The prompt's budget (agents/llm/prompt_budget.hpp, issue 30 item 6): section caps that cut
// where it costs least, their override, and the token estimate stored with each call.
#include <doctest/doctest.h>

#include <string>

#include "agents/llm/prompt_budget.hpp"
#include "core/options.hpp"
#include "core/error.hpp"

using namespace kmcts;
using namespace kmcts::llm;

namespace {

std::string numbered_lines(int n) {
  std::string s;
  for (int i = 1; i <= n; ++i) s += "line " + std::to_string(i) + " of the source;\n";
  return s;
}

}  // namespace

TEST_CASE("prompt budget: a section over its cap keeps its head and tail and says what went") {
  const std::string text = numbered_lines(1000);  // ~25,000 characters
  CHECK(cap_section(text, {100000}) == text);      // fits: unchanged
  const std::string cut = cap_section(text, {5000});
  CHECK(cut.size() <= 5000);
  CHECK(cut.size() > 4500);
  CHECK(cut.rfind("line 1 of the source;\n", 0) == 0);  // the head
  CHECK(cut.find("line 1000 of the source;\n") != std::string::npos);  // the tail
  CHECK(cut.find("lines (") != std::string::npos);
  CHECK(cut.find("characters) cut ...]\n") != std::string::npos);
  CHECK(cut.find("line 500 of the source") == std::string::npos);  // the middle went
  // Whole lines on both sides of the cut.
  const size_t marker = cut.find("[... ");
  CHECK(cut[marker - 1] == '\n');
  CHECK(cut.substr(cut.find("cut ...]\n") + 9, 5) == "line ");
}

TEST_CASE("prompt budget: a history keeps its latest steps") {
  std::string history;
  for (int i = 1; i <= 400; ++i) history += std::to_string(i) + ". tile 32 -> 64 with a longer note;\n";
  const std::string cut = cap_section(history, {2000, true});
  CHECK(cut.size() <= 2000);
  CHECK(cut.rfind("[... ", 0) == 0);
  CHECK(cut.find("400. tile") != std::string::npos);
  CHECK(cut.find("\n1. tile") == std::string::npos);
}

TEST_CASE("prompt budget: the caps, and their override by agents.llm.prompt_caps") {
  const auto defaults = default_section_caps();
  CHECK(defaults.at("parent_source").chars >= 32000);
  CHECK(defaults.at("parent_history").keep_tail_only);
  Config c;
  c.set("agents.llm.prompt_caps=parent_source=40000,tried=4000,my_section=900");
  const auto caps = section_caps(c);
  CHECK(caps.at("parent_source").chars == 40000);
  CHECK(caps.at("tried").chars == 4000);
  CHECK(caps.at("my_section").chars == 900);
  for (const char* bad : {"tried", "tried=", "tried=12", "=4000", "tried=4k"}) {
    CAPTURE(bad);
    Config b;
    b.set(std::string("agents.llm.prompt_caps=") + bad);
    CHECK_THROWS_AS(section_caps(b), InputError);
  }
  std::map<std::string, std::string> values = {{"tried", numbered_lines(500)}, {"kind", numbered_lines(500)}};
  cap_sections(values, caps);
  CHECK(values.at("tried").size() <= 4000);
  CHECK(values.at("kind") == numbered_lines(500));  // not a capped section
}

TEST_CASE("prompt budget: the token estimate") {
  CHECK(estimate_tokens("") == 0);
  CHECK(estimate_tokens("   \n\t ") == 0);
  CHECK(estimate_tokens("Hello, world!") == 4);  // Hello , world !
  CHECK(estimate_tokens("blockIdx.x * blockDim.x + threadIdx.x") == 11);  // block Idx .x * block Dim .x + thread Idx .x
  CHECK(estimate_tokens("1234567") == 3);
  // A CUDA source, dense with symbols, at 2.5-5 characters a token.
  const std::string source =
      "__global__ void silu_mul_kernel(const float* __restrict__ x, const float* __restrict__ g, float* y, long n) {\n"
      "  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;\n"
      "  if (i < n) y[i] = x[i] / (1.0f + __expf(-x[i])) * g[i];\n"
      "}\n";
  const size_t t = estimate_tokens(source);
  CHECK(t * 5 <= source.size() * 2);
  CHECK(t * 5 >= source.size());
}
