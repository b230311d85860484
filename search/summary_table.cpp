#include "search/summary_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include "core/hash.hpp"

namespace kmcts {
using nlohmann::json;

namespace {

constexpr const char* kMissing = "-";

// The summary comes from a coordinator that may have stopped anywhere, so every key is optional
// and a key of the wrong type counts as absent rather than throwing.
std::optional<double> number(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return std::nullopt;
  const double v = j[key].get<double>();
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

std::optional<std::string> text(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_string()) return std::nullopt;
  return j[key].get<std::string>();
}

const json& object(const json& j, const char* key) {
  static const json kEmpty = json::object();
  return j.is_object() && j.contains(key) && j[key].is_object() ? j[key] : kEmpty;
}

std::string speedup_text(double x) { return fmt::format("{:.2f}x", x); }

std::string integer_text(double v) { return fmt::format("{}", static_cast<long long>(std::llround(v))); }

std::string wall_time_text(double s) {
  if (s < 60) return fmt::format("{:.1f} s", s);
  const long long total = std::llround(s);
  if (total < 3600) return fmt::format("{} min {} s", total / 60, total % 60);
  return fmt::format("{} h {:02} min", total / 3600, (total % 3600) / 60);
}

std::string seed_line(const json& seed) {
  const auto median = number(seed, "median_ns");
  const auto speedup = number(seed, "speedup");
  if (!median && !speedup) return kMissing;
  std::string out = median ? format_duration_ns(*median) : kMissing;
  if (speedup) out += fmt::format("  ({} vs reference)", speedup_text(*speedup));
  return out;
}

std::string best_line(const json& best) {
  const auto node = number(best, "node");
  const auto median = number(best, "median_ns");
  if (!node && !median) return kMissing;
  std::string out = median ? format_duration_ns(*median) : kMissing;
  if (node) out += fmt::format("  node #{}", integer_text(*node));
  if (const auto hash = text(best, "hash")) out += "  " + short_hash(*hash);
  return out;
}

std::string speedup_line(const json& best) {
  const auto over_seed = number(best, "speedup_over_seed");
  const auto vs_reference = number(best, "speedup");
  if (!over_seed && !vs_reference) return kMissing;
  if (!over_seed) return fmt::format("{} vs reference", speedup_text(*vs_reference));
  std::string out = fmt::format("{} over seed", speedup_text(*over_seed));
  if (vs_reference) out += fmt::format("  ({} vs reference)", speedup_text(*vs_reference));
  return out;
}

// One step per line, numbered: a step such as "TILE 16 -> 32" contains an arrow itself, so
// joining the steps with " -> " would be ambiguous.
std::string plan_history_text(const json& best) {
  if (!best.contains("plan_history") || !best["plan_history"].is_array()) return kMissing;
  const json& steps = best["plan_history"];
  if (steps.empty()) return "(none: the seed is the best kernel)";
  std::string out;
  int i = 0;
  for (const json& step : steps) {
    if (i > 0) out += '\n';
    out += fmt::format("{}. {}", ++i, step.is_string() ? step.get<std::string>() : step.dump());
  }
  return out;
}

std::string evaluations_line(const json& summary) {
  const auto evaluations = number(summary, "evaluations");
  if (!evaluations) return kMissing;
  std::string out = integer_text(*evaluations);
  const auto failures = number(summary, "failures");
  if (!failures) return out;
  out += fmt::format("  ({} failed", integer_text(*failures));
  // Most frequent failure first; ties by name so the line is stable.
  std::vector<std::pair<long long, std::string>> by_verdict;
  for (const auto& [verdict, count] : object(summary, "failures_by_verdict").items())
    if (count.is_number()) by_verdict.emplace_back(count.get<long long>(), verdict);
  std::sort(by_verdict.begin(), by_verdict.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  for (size_t i = 0; i < by_verdict.size(); ++i)
    out += fmt::format("{}{} {}", i == 0 ? ": " : ", ", by_verdict[i].first, by_verdict[i].second);
  return out + ")";
}

std::string nodes_line(const json& summary) {
  const auto nodes = number(summary, "nodes");
  if (!nodes) return kMissing;
  std::string out = integer_text(*nodes);
  if (const auto t = number(summary, "transpositions"))
    out += fmt::format("  ({} transposition{})", integer_text(*t), *t == 1 ? "" : "s");
  return out;
}

// Only for runs whose summary counts agent calls (all of them, LLM or offline rule agents).
std::optional<std::string> agents_line(const json& summary) {
  const auto calls = number(summary, "agent_calls");
  if (!calls) return std::nullopt;
  std::string out = fmt::format("{} call{}", integer_text(*calls), *calls == 1 ? "" : "s");
  // Failed agent calls (the role's answer unusable, or its HTTP call out of retries) apart from
  // the HTTP attempts that were retried.
  if (const auto failed = number(summary, "agent_failures"); failed && *failed > 0)
    out += fmt::format(", {} failed", integer_text(*failed));
  const auto tokens = number(summary, "tokens");
  const auto dollars = number(summary, "dollars");
  if (tokens && *tokens > 0) out += fmt::format(", {} tokens", integer_text(*tokens));
  if (dollars && *dollars > 0) out += *dollars < 0.01 ? fmt::format(", ${:.4f}", *dollars) : fmt::format(", ${:.2f}", *dollars);
  const auto llm = number(summary, "llm_requests");
  const auto retries = number(summary, "llm_retries");
  if (llm && *llm > 0)
    out += fmt::format(" ({} LLM call{}, {} retried or failed attempt{})", integer_text(*llm), *llm == 1 ? "" : "s",
                       integer_text(retries.value_or(0)), retries.value_or(0) == 1 ? "" : "s");
  return out;
}

}  // namespace

std::string format_duration_ns(double ns) {
  if (!std::isfinite(ns)) return kMissing;
  static constexpr std::pair<double, const char*> kUnits[] = {
      {1e9, "s"}, {1e6, "ms"}, {1e3, "us"}};
  for (const auto& [scale, unit] : kUnits) {
    if (std::fabs(ns) >= scale) {
      const double v = ns / scale;
      // Three significant digits: 1.23, 12.3, 123.
      const int decimals = v >= 100 ? 0 : v >= 10 ? 1 : 2;
      return fmt::format("{:.{}f} {}", v, decimals, unit);
    }
  }
  return fmt::format("{:.0f} ns", ns);
}

std::string format_summary_table(const json& summary) {
  const json& best = object(summary, "best");
  const auto wall = number(summary, "wall_seconds");
  std::vector<std::pair<std::string, std::string>> rows = {
      {"problem", text(summary, "problem").value_or(kMissing)},
      {"status", text(summary, "status").value_or(kMissing)},
      {"seed kernel", seed_line(object(summary, "seed"))},
      {"best kernel", best_line(best)},
      {"speedup", speedup_line(best)},
      {"plan history", plan_history_text(best)},
      {"evaluations", evaluations_line(summary)},
      {"nodes", nodes_line(summary)},
  };
  if (const auto agents = agents_line(summary)) rows.emplace_back("agents", *agents);
  rows.insert(rows.end(), {
      {"wall time", wall ? wall_time_text(*wall) : kMissing},
      {"run directory", text(summary, "run_dir").value_or(kMissing)},
  });
  if (const auto message = text(summary, "message"); message && !message->empty())
    rows.emplace_back("message", *message);

  size_t width = 0;
  for (const auto& row : rows) width = std::max(width, row.first.size());
  std::string out;
  for (const auto& [key, value] : rows) {
    // Continuation lines of a multi-line value start under the value column.
    size_t start = 0;
    bool first = true;
    while (true) {
      const size_t end = value.find('\n', start);
      const std::string_view line(value.data() + start,
                                  (end == std::string::npos ? value.size() : end) - start);
      out += fmt::format("{:<{}}  {}\n", first ? key : std::string(), width, line);
      first = false;
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }
  return out;
}

}  // namespace kmcts
