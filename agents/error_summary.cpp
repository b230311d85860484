#include "agents/error_summary.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <regex>
#include <sstream>

#include <fmt/format.h>

namespace kmcts {
namespace {

using nlohmann::json;

// std::regex recurses per character: lines longer than this are not matched (a compiler's
// diagnostics are short; a log's long lines are command lines), and a log is read this far.
constexpr size_t kMaxLineChars = 4000;
constexpr size_t kMaxLines = 50000;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
  }
  return lines;
}

std::string trimmed(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t") - a + 1);
}

std::string base_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool is_caret_line(const std::string& line) {
  const std::string t = trimmed(line);
  return !t.empty() && t.find_first_not_of("^~ |") == std::string::npos && t.find('^') != std::string::npos;
}

// A system header, an installed package's, or the host unit kb_split.py generates.
bool candidates_own(const std::string& file) {
  if (file.rfind("/usr/", 0) == 0 || file.rfind("/opt/", 0) == 0) return false;
  if (file.find("site-packages/") != std::string::npos || file.find("dist-packages/") != std::string::npos) return false;
  return file.find(".kmcts-host.") == std::string::npos;
}

std::string one_line(const std::string& text) { return text.substr(0, text.find('\n')); }

std::string number(const json& v) {
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  if (v.is_number()) return fmt::format("{:.6g}", v.get<double>());
  return v.is_string() ? v.get<std::string>() : v.dump();
}

// The compile errors: the first with the source around it, the kinds, the next few.
std::string compile_summary(const std::vector<Diagnostic>& found, const std::string& source) {
  std::vector<Diagnostic> errors = found;
  std::stable_partition(errors.begin(), errors.end(), [](const Diagnostic& d) { return d.candidates_own; });
  // The host unit kb_split.py generated is kmcts's, not the candidate's: its errors only repeat
  // the candidate's own (a launch with the wrong arguments) in kmcts's words.
  if (errors.front().candidates_own)
    std::erase_if(errors, [](const Diagnostic& d) { return d.file.find(".kmcts-host.") != std::string::npos; });
  const Diagnostic& first = errors.front();
  std::string out = fmt::format("First error: {}{}: {}\n", base_name(first.file),
                                first.line > 0 ? fmt::format(", line {}", first.line) : std::string(), first.message);
  // Its line in the candidate's own source: the line the compiler quoted, found there (a
  // load_inline string is a file of its own, numbered from its own start), else by number
  // where the compiled file is the candidate itself.
  int at = 0;
  if (const std::string q = trimmed(first.quoted_line); !q.empty()) {
    // Of several equal lines ("}"), the one nearest the compiler's own line number.
    const auto src = lines_of(source);
    for (size_t i = 0; i < src.size(); ++i)
      if (trimmed(src[i]) == q && (at == 0 || std::abs(static_cast<int>(i) + 1 - first.line) < std::abs(at - first.line)))
        at = static_cast<int>(i) + 1;
  }
  const std::string name = base_name(first.file);
  if (at == 0 && first.line > 0 && (name.rfind("kernel.", 0) == 0)) at = first.line;
  if (at > 0) {
    out += fmt::format("In the source you wrote, line {}:\n{}", at, source_excerpt(source, at));
  } else if (!trimmed(first.quoted_line).empty()) {
    out += "The line: " + trimmed(first.quoted_line) + "\n";
  }
  std::map<std::string, int> kinds;
  std::vector<std::string> order;
  for (const Diagnostic& d : errors)
    if (kinds[error_kind(d.message)]++ == 0) order.push_back(error_kind(d.message));
  if (errors.size() > 1) {
    out += fmt::format("{} errors in all, of {} kind{}:", errors.size(), order.size(), order.size() == 1 ? "" : "s");
    for (const std::string& k : order) out += fmt::format(" {} (x{});", k, kinds[k]);
    out.back() = '\n';
    const size_t shown = std::min<size_t>(errors.size(), 5);
    for (size_t i = 1; i < shown; ++i)
      out += fmt::format("- {}{}: {}\n", base_name(errors[i].file),
                         errors[i].line > 0 ? fmt::format(", line {}", errors[i].line) : std::string(), errors[i].message);
    if (errors.size() > shown) out += fmt::format("- and {} more\n", errors.size() - shown);
  }
  return out;
}

std::string wrong_answer_summary(const json& d) {
  std::string out;
  if (d.contains("output")) {
    out += fmt::format("Where: output '{}'", number(d["output"]));
    if (d.contains("first_bad_index")) out += ", element " + number(d["first_bad_index"]);
    if (d.contains("first_bad_coords") && d["first_bad_coords"].is_array()) {
      std::string coords;
      for (const json& c : d["first_bad_coords"]) coords += (coords.empty() ? "" : ", ") + number(c);
      out += " (coordinates [" + coords + "])";
    }
    out += "\n";
  }
  if (d.contains("expected") && d.contains("got"))
    out += fmt::format("How: expected {}, got {}", number(d["expected"]), number(d["got"])) +
           (d.contains("max_abs_err") ? fmt::format("; max abs error {}", number(d["max_abs_err"])) : "") +
           (d.contains("max_rel_err") ? fmt::format(", max rel error {}", number(d["max_rel_err"])) : "") +
           (d.contains("rule") ? fmt::format(" (rule {}, atol {}, rtol {})", number(d["rule"]), number(d.value("atol", json(0))),
                                             number(d.value("rtol", json(0))))
                               : "") +
           "\n";
  if (d.value("unwritten_elements", 0) > 0)
    out += fmt::format("{} output elements were never written\n", number(d["unwritten_elements"]));
  if (d.contains("distribution")) {
    std::string inputs;
    if (d["distribution"].is_object())
      for (const auto& [name, dist] : d["distribution"].items()) inputs += (inputs.empty() ? "" : ", ") + name + " " + number(dist);
    else
      inputs = number(d["distribution"]);
    out += "Inputs drawn as: " + inputs + "\n";
  }
  std::string when;
  if (d.contains("phase")) when = number(d["phase"]);
  if (d.contains("trial")) when += " trial " + number(d["trial"]);
  if (d.contains("input_set")) when += " input set " + number(d["input_set"]);
  if (!when.empty()) out += "When: " + when + "\n";
  return out;
}

// The candidate's own frame of a Python traceback (its file is not an installed package nor
// kmcts's harness) and the exception, with the source around the frame's line.
std::string traceback_summary(const std::string& log, const std::string& source) {
  static const std::regex frame(R"re(^\s*File "([^"]+)", line (\d+), in (.+)$)re");
  static const std::regex exception(R"re(^([A-Za-z_][\w.]*(Error|Exception|Interrupt|Exit))(:.*)?$)re");
  std::string file, function, exc;
  int line = 0;
  for (const std::string& l : lines_of(log)) {
    std::smatch m;
    if (l.size() > kMaxLineChars) continue;
    if (std::regex_match(l, m, frame)) {
      const std::string f = m[1];
      if (candidates_own(f) && f.find("/kernelbench/") == std::string::npos && f.find("<frozen") == std::string::npos)
        file = f, line = std::stoi(m[2]), function = m[3];
    } else if (std::regex_match(l, m, exception)) {
      exc = l;
    }
  }
  std::string out;
  if (!exc.empty()) out += "Exception: " + exc.substr(0, 400) + "\n";
  if (line > 0) {
    out += fmt::format("Raised from your code at line {} (in {}):\n", line, function);
    if (source.find('\n') != std::string::npos) out += source_excerpt(source, line);
  }
  return out;
}

std::string raw_cut(const std::string& log, size_t keep) {
  if (log.size() <= 2 * keep) return log;
  return log.substr(0, keep) + "\n[...]\n" + log.substr(log.size() - keep);
}

}  // namespace

std::vector<Diagnostic> compiler_errors(const std::string& log) {
  static const std::regex gcc(R"re(^(.+?):(\d+):(\d+): (?:fatal )?error: (.*)$)re");
  static const std::regex nvcc(R"re(^(.+?)\((\d+)\): (?:catastrophic )?error(?: #[\w-]+)?: (.*)$)re");
  static const std::regex ptxas(R"re(^ptxas (?:fatal|error)\s*: (.*)$)re");
  static const std::regex triton(R"re(CompilationError: at (\d+):(\d+):\s*$)re");
  static const std::regex exception(R"re(^([A-Za-z_][\w.]*(Error|Exception))(\(.*\)|:.*)$)re");
  std::vector<Diagnostic> out;
  const std::vector<std::string> lines = lines_of(log);
  for (size_t i = 0; i < lines.size() && i < kMaxLines; ++i) {
    std::smatch m;
    Diagnostic d;
    const std::string& l = lines[i];
    if (l.size() > kMaxLineChars) continue;  // a command line or a generated blob: no diagnostic
    if (std::regex_match(l, m, gcc)) {
      d.file = m[1], d.line = std::stoi(m[2]), d.message = m[4];
      // "   31 |     code" follows: the line it quotes.
      static const std::regex quote(R"re(^\s*\d+ \| (.*)$)re");
      std::smatch q;
      if (i + 1 < lines.size() && std::regex_match(lines[i + 1], q, quote)) d.quoted_line = q[1];
    } else if (std::regex_match(l, m, nvcc)) {
      d.file = m[1], d.line = std::stoi(m[2]), d.message = m[3];
      // nvcc may add a detail ("operand types are: ..."), then quotes the line, then a caret
      // line (not always kept in a log): the last line before a caret, a blank or the next
      // diagnostic.
      for (size_t j = i + 1; j < lines.size() && j <= i + 4; ++j) {
        if (trimmed(lines[j]).empty() || std::regex_match(lines[j], nvcc) ||
            lines[j].find(": note") != std::string::npos || lines[j].find(": warning") != std::string::npos)
          break;
        if (is_caret_line(lines[j])) break;
        d.quoted_line = lines[j];
      }
    } else if (std::regex_match(l, m, ptxas)) {
      d.file = "ptxas", d.message = m[1];
    } else if (std::regex_search(l, m, triton)) {
      // The kernel's source up to the caret, then the error itself.
      d.file = "triton kernel", d.line = std::stoi(m[1]);
      for (size_t j = i + 1; j < lines.size() && j < i + 200; ++j) {
        if (is_caret_line(lines[j]) && j > i + 1) d.quoted_line = lines[j - 1];
        std::smatch e;
        if (std::regex_match(lines[j], e, exception)) {
          d.message = lines[j];
          i = j;
          break;
        }
      }
      if (d.message.empty()) d.message = "Triton could not compile the kernel";
    } else {
      continue;
    }
    d.candidates_own = candidates_own(d.file);
    const bool repeated = std::any_of(out.begin(), out.end(), [&](const Diagnostic& o) {
      return o.file == d.file && o.line == d.line && o.message == d.message;
    });
    if (!repeated) out.push_back(std::move(d));
  }
  return out;
}

std::string error_kind(const std::string& message) {
  static const std::regex quoted(R"re("[^"]*"|‘[^’]*’|'[^']*'|`[^`]*`)re");
  static const std::regex numbers(R"re(\b\d+\b)re");
  return std::regex_replace(std::regex_replace(message, quoted, "\"…\""), numbers, "N");
}

std::string source_excerpt(const std::string& source, int line, int context) {
  const std::vector<std::string> lines = lines_of(source);
  if (line < 1 || line > static_cast<int>(lines.size())) return "";
  std::string out;
  const int from = std::max(1, line - context), to = std::min(static_cast<int>(lines.size()), line + context);
  for (int n = from; n <= to; ++n) out += fmt::format("{} {:>4} | {}\n", n == line ? ">" : " ", n, lines[static_cast<size_t>(n - 1)]);
  return out;
}

namespace {

// compute-sanitizer's diagnosis of a memory fault (details.fault, evaluator.diagnose_faults): the
// kernel, thread and address, and the candidate's line where the kernel was built with line
// information (the CUDA evaluator's kernel.cu).
std::string fault_summary(const json& details, const std::string& source) {
  if (!details.is_object() || !details.contains("fault") || !details["fault"].is_object()) return "";
  const json& f = details["fault"];
  const auto field = [&](const char* key) { return f.contains(key) && f[key].is_string() ? f[key].get<std::string>() : std::string(); };
  std::string out = "Fault (" + field("tool") + "): " + field("error");
  if (!field("kernel").empty()) out += "\n  in kernel " + field("kernel") + (field("at").empty() ? "" : " at " + field("at"));
  if (!field("thread").empty()) out += "\n  by thread " + field("thread") + " of block " + field("block");
  if (!field("address").empty()) out += "\n  " + field("address");
  out += "\n";
  static const std::regex at_line(R"re(kernel\.cu:(\d{1,7})$)re");
  std::smatch m;
  const std::string at = field("at");
  if (std::regex_search(at, m, at_line))
    if (const std::string lines = source_excerpt(source, std::stoi(m[1])); !lines.empty()) out += "The line:\n" + lines;
  return out;
}

}  // namespace

std::string summarize_failure(const EvalResult& r, const std::string& source, size_t max_chars) {
  // The log holds what the message says (its first line, or a Triton error's block) and more.
  const std::vector<Diagnostic> errors = compiler_errors(r.log.empty() ? r.message : r.log);
  // A build's message is often a compiler command line: with the errors below, its start will do.
  std::string out = r.message;
  if (!errors.empty()) {
    out = one_line(out);
    if (const size_t step = out.find(": ["); step != std::string::npos) out = out.substr(0, step) + " (a build step failed)";
    if (out.size() > 160) out = out.substr(0, 160) + " [...]";
  } else if (out.size() > 600) {
    out = one_line(out).substr(0, 600) + " [...]";
  }
  out += "\n";
  std::string body;
  if (!errors.empty()) {
    body = compile_summary(errors, source);
  } else if (r.verdict == Verdict::wrong_answer) {
    body = wrong_answer_summary(r.details);
  }
  if (r.verdict == Verdict::rejected) {  // the static screen names the line it stopped at
    static const std::regex at_line(R"re(\(line (\d+):)re");
    std::smatch m;
    const std::string head = r.message.substr(0, 1000);
    if (std::regex_search(head, m, at_line))
      if (const std::string lines = source_excerpt(source, std::stoi(m[1])); !lines.empty())
        body += "The line:\n" + lines;
  }
  if (r.verdict != Verdict::compile_error && errors.empty()) {
    if (r.details.contains("cuda_error"))
      body += "CUDA error: " + number(r.details["cuda_error"]) +
              (r.details.contains("phase") ? " (during " + number(r.details["phase"]) + ")" : "") + "\n";
    body += fault_summary(r.details, source);
    body += traceback_summary(r.log, source);
  }
  if (body.empty() && !r.log.empty()) body = "Log:\n" + raw_cut(r.log, max_chars / 3);
  out += body;
  if (out.size() > max_chars) out = out.substr(0, max_chars) + "\n[cut]";
  return out;
}

}  // namespace kmcts
