#include "core/simulated_defect.hpp"

#include <fmt/format.h>

namespace kmcts::sim {
namespace {

constexpr const char* kCompile = "#error kmcts agent simulator: this attempt does not compile";
constexpr const char* kWrong = "// kmcts agent simulator: this attempt computes a wrong answer";

}  // namespace

const char* to_string(Defect defect) {
  switch (defect) {
    case Defect::compile_error: return "compile_error";
    case Defect::wrong_answer: return "wrong_answer";
    case Defect::none: break;
  }
  return "none";
}

std::string with_defect(const std::string& source, Defect defect, int attempt) {
  if (defect == Defect::none) return source;
  return fmt::format("{} (attempt {})\n{}", defect == Defect::compile_error ? kCompile : kWrong, attempt, source);
}

Defect defect_of(const std::string& source) {
  const std::string first = source.substr(0, source.find('\n'));
  if (first.rfind(kCompile, 0) == 0) return Defect::compile_error;
  if (first.rfind(kWrong, 0) == 0) return Defect::wrong_answer;
  return Defect::none;
}

std::string without_defect(const std::string& source) {
  if (defect_of(source) == Defect::none) return source;
  const size_t end = source.find('\n');
  return end == std::string::npos ? std::string() : source.substr(end + 1);
}

std::optional<EvalResult> simulated_result(const std::string& source) {
  const Defect defect = defect_of(source);
  if (defect == Defect::none) return std::nullopt;
  EvalResult r;
  const std::string line = source.substr(0, source.find('\n'));
  r.verdict = defect == Defect::compile_error ? Verdict::compile_error : Verdict::wrong_answer;
  r.message = fmt::format("{}: {}", defect == Defect::compile_error ? "compile error" : "wrong answer", line);
  r.log = line;
  if (defect == Defect::wrong_answer) r.details = {{"first_bad_index", 0}, {"max_abs_err", 1.0}, {"simulated", true}};
  return r;
}

}  // namespace kmcts::sim
