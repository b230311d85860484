#include "hardware/evaluator.hpp"

namespace kmcts {

EvalResult Evaluator::evaluate(const std::string& source) {
  BuildResult built = build(source);
  if (!built.ok) {
    EvalResult result;
    result.verdict = Verdict::compile_error;
    auto newline = built.log.find('\n');
    result.message = "compile error: " + built.log.substr(0, newline);
    result.log = built.log;
    result.compile_seconds = built.seconds;
    result.compile_cached = built.cached;
    return result;
  }
  EvalResult result = measure(built);
  result.compile_seconds = built.seconds;
  result.compile_cached = built.cached;
  return result;
}

}  // namespace kmcts
