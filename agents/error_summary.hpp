#pragma once
// What a Debugger reads of a failed evaluation (issue 30, item 3), instead of a raw cut of its
// log: the first error with the candidate's own source lines around it, the distinct kinds of
// error and how many more there were; for a wrong answer where and how (which output, which
// element and coordinates, expected and got, the input distributions, the phase); for a crash
// the error and the candidate's own frame of a Python traceback; for a screen rejection its
// rule and line (in the message already).
//
// The diagnostics it reads, as the real tools print them (tests/fixtures/error_logs):
//   g++ / clang   FILE:LINE:COL: error: MESSAGE   (and "fatal error:")
//   nvcc          FILE(LINE): error: MESSAGE      (the EDG front end; "error #NNN-D:" too)
//   ptxas         ptxas error   : MESSAGE
//   Triton        CompilationError: at LINE:COL: then the kernel's source, a caret, the error
//   Python        Traceback ... File "F", line N, in FN ... EXCEPTION: MESSAGE
// Errors in system headers, and in the host unit kmcts's own kb_split.py generated
// (*.kmcts-host.cpp), come after those in the candidate's files.
#include <string>
#include <vector>

#include "core/eval_result.hpp"

namespace kmcts {

/// One compiler error.
struct Diagnostic {
  std::string file;
  int line = 0;              // 0: none given
  std::string message;       // after "error: "
  std::string quoted_line;   // the source line the compiler printed under it, if any
  bool candidates_own = true;  // not a system header nor kmcts's generated host unit
};

/// Every error of a compiler log, in order (notes and warnings left out).
std::vector<Diagnostic> compiler_errors(const std::string& log);

/// `message` with what varies between two errors of one kind (quoted names, numbers) replaced by
/// "…": `identifier "yy" is undefined` -> `identifier "…" is undefined`.
std::string error_kind(const std::string& message);

/// Lines `line - context` .. `line + context` of `source` (1-based), numbered, `line` marked.
std::string source_excerpt(const std::string& source, int line, int context = 2);

/// The failure of `result` as its Debugger should read it, at most `max_chars` long; `source`
/// is the failed candidate's own source (for the lines around an error).
std::string summarize_failure(const EvalResult& result, const std::string& source, size_t max_chars = 3000);

}  // namespace kmcts
