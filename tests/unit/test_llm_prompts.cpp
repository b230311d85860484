// Prompt templates and reply parsing: the corpus of messy replies models actually write.
#include <doctest/doctest.h>

#include "agents/llm/prompt.hpp"
#include "agents/llm/reply_parser.hpp"
#include "core/error.hpp"

using namespace kmcts;
using namespace kmcts::llm;

TEST_CASE("prompt: placeholders are checked at load and filled at render") {
  auto t = PromptTemplate::parse("Problem {{name}}:\n{{source}}\nint a[2][2] = {{1, 2}, {3, 4}};\n", "inline", {"name", "source", "extra"});
  CHECK(t.placeholders() == std::set<std::string>{"name", "source"});
  CHECK(t.render({{"name", "matmul"}, {"source", "x {{name}} y"}}) ==
        "Problem matmul:\nx {{name}} y\nint a[2][2] = {{1, 2}, {3, 4}};\n");  // values are not re-scanned
  try {
    PromptTemplate::parse("{{problem_name}} {{tirde}}", "configs/prompts/planner.md", {"problem_name", "tried"});
    FAIL("no throw");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("configs/prompts/planner.md") != std::string::npos);
    CHECK(std::string(e.what()).find("{{tirde}}") != std::string::npos);
  }
  CHECK_THROWS_AS(PromptTemplate::load("/nonexistent/planner.md", {}), InputError);
  try {
    PromptTemplate::parse("Improve {{parent_source}}.", "configs/prompts/coder.md", {"parent_source", "plan"}, {"parent_source", "plan"});
    FAIL("no throw");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("never uses {{plan}}") != std::string::npos);
  }
  CHECK_THROWS_AS(t.render({{"name", "x"}}), std::logic_error);
}

TEST_CASE("prompt: the shipped templates load with the placeholders their roles provide") {
  const std::set<std::string> common = {"kind", "problem_name", "problem_description", "reference_source"};
  auto with = [&](std::set<std::string> extra) {
    extra.insert(common.begin(), common.end());
    return extra;
  };
  CHECK_NOTHROW(PromptTemplate::load(default_prompt_dir() / "planner.md",
                                     with({"hardware", "parent_id", "parent_source", "parent_result", "profile",
                                           "parent_history", "best_summary", "tried", "memory", "count"})));
  CHECK_NOTHROW(PromptTemplate::load(default_prompt_dir() / "coder.md", with({"parent_source", "profile", "plan"})));
  CHECK_NOTHROW(PromptTemplate::load(default_prompt_dir() / "debugger.md",
                                     with({"parent_source", "failed_source", "verdict", "error", "attempt"})));
}

TEST_CASE("reply parsing: the last complete C++ block wins") {
  CHECK(extract_code("Here:\n```cpp\nint a;\n```\n") == "int a;\n");
  CHECK(extract_code("Sketch:\n```\nv1\n```\nFinal:\n```c++\nv2\n```\nDone.") == "v2\n");
  CHECK(extract_code("```cpp\nv1\n```\nand the config\n```json\n{}\n```") == "v1\n");  // json is never the kernel
  CHECK(extract_code("```cpp\ngood\n```\n```cpp\ncut off by the token lim") == "good\n");  // unterminated ignored
  CHECK_FALSE(extract_code("I would rather not write code today.").has_value());
  CHECK_FALSE(extract_code("```cpp\nnever closed").has_value());
  CHECK(extract_code("  ```CUDA\n__global__ void k() {}\n  ```") == "__global__ void k() {}\n");
}

TEST_CASE("reply parsing: plans in every list style, priors normalised, duplicates merged") {
  auto plans = parse_plans(
      "Sure! Here are my plans:\n"
      "1. [0.5] Tile the loops 32x32 for cache reuse\n"
      "2) (p=0.3) Unroll the k loop by 4\n"
      "3. **Vectorise**: use AVX-512 on the inner loop (20%)\n"
      "- tile the loops 32x32   for cache reuse\n"  // a duplicate
      "* Hoist the bounds checks\n"
      "5. [0.1] set SCALE_EXPR=\"2.0f * x[i]\"\n"
      "```\n1. not a plan, inside code\n```\n",
      10);
  REQUIRE(plans.size() == 5);
  CHECK(plans[4].text == "set SCALE_EXPR=\"2.0f * x[i]\"");  // a lone * is not markup
  CHECK(plans[0].text == "Tile the loops 32x32 for cache reuse");
  CHECK(plans[1].text == "Unroll the k loop by 4");
  CHECK(plans[2].text == "Vectorise: use AVX-512 on the inner loop");
  CHECK(plans[3].text == "Hoist the bounds checks");
  // Given: 0.5, 0.3, 0.2, 0.1; the missing one gets their mean 0.275; total 1.375.
  CHECK(plans[0].prior == doctest::Approx(0.5 / 1.375));
  CHECK(plans[3].prior == doctest::Approx(0.275 / 1.375));
  double sum = 0;
  for (const auto& p : plans) sum += p.prior;
  CHECK(sum == doctest::Approx(1.0));
  CHECK(parse_plans("1. a\n2. b\n3. c\n", 2).size() == 2);
  auto flat = parse_plans("1. a\n2. b\n", 5);
  CHECK(flat[0].prior == doctest::Approx(0.5));
  CHECK(parse_plans("No list here, just prose.", 3).empty());
}

TEST_CASE("reply parsing: bold markup goes, code and CUDA identifiers stay") {
  const auto plans = parse_plans(
      "1. **Fast exp**: use `__expf` and `**ptr` in the loop\n"
      "2. __Restrict the pointers__ - mark them __restrict__ and call __syncthreads() once\n"
      "3. use __expf and __fdividef in the loop\n"
      "4. __ldg loads with __restrict__ pointers\n",
      5);
  REQUIRE(plans.size() == 4);
  CHECK(plans[0].text == "Fast exp: use `__expf` and `**ptr` in the loop");
  CHECK(plans[1].text == "Restrict the pointers - mark them __restrict__ and call __syncthreads() once");
  CHECK(plans[2].text == "use __expf and __fdividef in the loop");
  CHECK(plans[3].text == "__ldg loads with __restrict__ pointers");
}

TEST_CASE("reply parser: an unusable reply is quoted in its error, on one line, cut with its length") {
  using kmcts::llm::reply_excerpt;
  CHECK(reply_excerpt("I think you should make it faster.") == "'I think you should make it faster.'");
  CHECK(reply_excerpt("line one\nline two") == "'line one\\nline two'");
  CHECK(reply_excerpt(std::string(500, 'x'), 10) == "'xxxxxxxxxx...' (500 characters)");
  CHECK(reply_excerpt("") == "an empty reply");
}

TEST_CASE("reply parsing: priors only where they cannot be code, preambles and heading titles are not plans") {
  auto texts = [](const std::string& reply) {
    std::vector<std::string> out;
    for (const auto& p : kmcts::llm::parse_plans(reply, 8)) out.push_back(p.text);
    return out;
  };
  const auto plans = kmcts::llm::parse_plans(
      "1. Reduce along dim (1) with warp shuffles (p=0.2)\n2. write the partial sum to out[0] once per block [0.8]\n", 8);
  REQUIRE(plans.size() == 2);
  CHECK(plans[0].text == "Reduce along dim (1) with warp shuffles");
  CHECK(plans[1].text == "write the partial sum to out[0] once per block");
  CHECK(plans[0].prior == doctest::Approx(0.2));
  CHECK(texts("## 1. Analysis\nslow.\n## 2. Proposed plans\n1. Fuse the epilogue\n2. Tile by 64\n") ==
        std::vector<std::string>{"Fuse the epilogue", "Tile by 64"});
  CHECK(texts("- baseline 1.2 ms\n- memory bound\n\n## Plans\n  1. Fuse\n  2. Tile\n") ==
        std::vector<std::string>{"Fuse", "Tile"});
  CHECK(texts("1. Use the .cuh header\n2. pick a ? b : c per lane\n") ==
        std::vector<std::string>{"Use the .cuh header", "pick a ? b : c per lane"});  // no prior: text untouched
  CHECK(texts("a draft:\n1. nope\n</think>\n1. Real plan\n") == std::vector<std::string>{"Real plan"});  // R1's lone tag
}
