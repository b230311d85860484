#include "agents/llm/mock_rule_answerer.hpp"

#include <map>
#include <mutex>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "agents/llm/reply_parser.hpp"
#include "agents/roles.hpp"
#include "core/error.hpp"
#include "core/hash.hpp"

namespace kmcts::llm {
namespace {

// Line-wise trimmed text: the key under which a kernel is recognised.
std::string normal(const std::string& code) {
  std::istringstream in(code);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    size_t b = line.find_last_not_of(" \t\r");
    if (b != std::string::npos) out += line.substr(0, b + 1) + "\n";
  }
  return out;
}

struct Rule {
  Problem problem;
  std::map<std::string, SpacePoint> points;  // normal(source) -> point
  std::unique_ptr<Planner> planner = PlannerRegistry::instance().create("planner", "rule", Config());

  std::string fenced(const SpacePoint& p) const {
    return "```cpp\n" + problem.space->render(*problem.template_source, p) + "```\n";
  }

  std::string answer(const std::string& user) {
    const auto blocks = code_blocks(user);  // the prompts show the reference first, then kernels
    auto point_of = [&](size_t i) -> const SpacePoint* {
      if (i >= blocks.size()) return nullptr;
      auto it = points.find(normal(blocks[i].code));
      return it == points.end() ? nullptr : &it->second;
    };
    std::smatch m;
    if (std::regex_search(user, m, std::regex(R"(Propose (\d+) distinct optimisation plans)"))) {
      const SpacePoint* parent = point_of(1);
      if (!parent) return "mock: the kernel to improve is not a point of the problem's space";
      PlanContext ctx;
      ctx.problem = &problem;
      ctx.parent.id = 0;
      ctx.parent.set_meta({{"params", TunableSpace::to_json(*parent)}});
      ctx.count = std::stoi(m[1]);
      ctx.rng = CounterRng(0, string_key(sha256_hex(user)));
      PlanResult r = planner->propose(ctx);
      std::string out = "Here are my plans:\n";
      int n = 0;
      for (const auto& plan : r.plans) {
        std::string set;
        for (const auto& [k, v] : plan.data.at("set").items()) set += fmt::format(" {}={}", k, v.dump());  // strings quoted
        out += fmt::format("{}. [{:.2f}] set{} ({})\n", ++n, plan.prior, set, plan.text);
      }
      return n ? out : "mock: no plan left from this kernel";
    }
    if (std::regex_search(user, m, std::regex(R"(Apply this optimisation plan to the current kernel: ([^\n]*))"))) {
      const SpacePoint* parent = point_of(1);
      if (!parent) return "mock: the current kernel is not a point of the problem's space";
      SpacePoint point = *parent;
      const std::string plan = m[1];
      std::smatch kv;
      // NAME=VALUE with VALUE a JSON number or a JSON string ("x[i] + x[i]").
      static const std::regex assignment(R"re((\w+)=("(?:[^"\\]|\\.)*"|[-+0-9.eE]+))re");
      for (auto it = plan.cbegin(); std::regex_search(it, plan.cend(), kv, assignment); it = kv.suffix().first) {
        const SpaceParam* param = problem.space->find(kv[1]);
        nlohmann::json value = nlohmann::json::parse(kv[2].str(), nullptr, false);
        if (!param || value.is_discarded()) continue;
        for (const auto& v : param->values)
          if (v == value) point[param->name] = v;
      }
      return "Here is the kernel:\n" + fenced(point) + "It applies the plan.";
    }
    if (user.find("This is repair attempt") != std::string::npos) {
      const SpacePoint* parent = point_of(1);
      if (!parent) return "mock: the kernel it was derived from is not a point of the problem's space";
      return "Reverting to the working kernel:\n" + fenced(*parent);
    }
    return "mock: cannot tell which role this prompt is for";
  }
};

}  // namespace

MockAnswerer rule_answerer(const Problem& problem) {
  if (!problem.space || !problem.template_source)
    throw InputError(fmt::format("{}: the rule answerer needs a problem with a tunable space", problem.dir.string()));
  auto rule = std::make_shared<Rule>();
  rule->problem = problem;
  // Every valid point, rendered once (the shipped CPU spaces have a few hundred).
  problem.space->for_each_point([&](const SpacePoint& p) {
    if (problem.space->valid(p)) rule->points.emplace(normal(problem.space->render(*problem.template_source, p)), p);
  });
  auto mutex = std::make_shared<std::mutex>();
  return [rule, mutex](const std::string&, const std::string&, const std::string& user) {
    std::lock_guard lock(*mutex);
    return rule->answer(user);
  };
}

}  // namespace kmcts::llm
