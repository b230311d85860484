#pragma once
// A defect the agent simulator (agents/sim/) writes into a source, as its first line, so that a
// simulated search meets compile errors and wrong answers at the rates a user sets, the way an
// LLM's first attempts do. The compile error is an #error directive, which any C, C++ or CUDA
// compiler refuses for real; the wrong answer is a comment only the simulation evaluators read
// (synthetic: its landscape; replay: a recorded landscape). Both name the repair attempt, so a
// failed repair is a new source, not a transposition of the failed one.
#include <optional>
#include <string>

#include "core/eval_result.hpp"

namespace kmcts::sim {

enum class Defect { none, compile_error, wrong_answer };

const char* to_string(Defect defect);

/// `source` with the defect's line in front (unchanged for Defect::none).
std::string with_defect(const std::string& source, Defect defect, int attempt);
/// The defect `source` carries: none unless its first line is one with_defect() writes.
Defect defect_of(const std::string& source);
/// `source` without that first line (itself when it has none).
std::string without_defect(const std::string& source);
/// What a simulation evaluator answers for a source with a defect (compile_error or
/// wrong_answer, the defect's line as message and log); nullopt for one without.
std::optional<EvalResult> simulated_result(const std::string& source);

}  // namespace kmcts::sim
