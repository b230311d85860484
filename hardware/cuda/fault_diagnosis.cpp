#include "hardware/cuda/fault_diagnosis.hpp"

#include <algorithm>
#include <array>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "core/text.hpp"
#include "hardware/cuda/devices.hpp"

KMCTS_OPTION("evaluator.diagnose_faults", Bool, true, std::nullopt, std::nullopt,
             "After a candidate crashes with a memory fault on the GPU (illegal or misaligned address, unspecified "
             "launch failure), run its call once more under compute-sanitizer's memcheck, off the measurement path, "
             "and keep which kernel, thread and block faulted and where the address lies (details.fault; the "
             "Debugger reads it). CUDA and KernelBench evaluators")
KMCTS_OPTION("evaluator.compute_sanitizer", String, "", std::nullopt, std::nullopt,
             "compute-sanitizer for evaluator.diagnose_faults; empty = $CUDA_HOME/bin, /usr/local/cuda/bin, or PATH")

namespace kmcts::cuda {

using nlohmann::json;

FaultDiagnosis FaultDiagnosis::from_config(const Config& config) {
  FaultDiagnosis d;
  d.enabled = config.get_bool("evaluator.diagnose_faults");
  d.tool = config.get_string("evaluator.compute_sanitizer");
  return d;
}

bool FaultDiagnosis::wanted(const EvalResult& r) const {
  if (!enabled || r.verdict != Verdict::crash) return false;
  // CUDA's words for a kernel's memory fault (cudaGetErrorString), as they reach the message
  // or the CUDA worker's details.cuda_error.
  static constexpr std::array kFaults = {"illegal memory access", "illegal address", "global/shared address space",
                                         "misaligned address", "unspecified launch failure", "invalid program counter",
                                         "illegal instruction", "hardware stack error", "out of range address"};
  std::string text = r.message;
  if (r.details.is_object() && r.details.contains("cuda_error") && r.details["cuda_error"].is_string())
    text += "\n" + r.details["cuda_error"].get<std::string>();
  text = to_lower(text);
  return std::any_of(kFaults.begin(), kFaults.end(), [&](const char* f) { return text.find(f) != std::string::npos; });
}

std::vector<std::string> FaultDiagnosis::command() const {
  // The first errors only (the first is the one kept), no host backtraces (host frames of the
  // driver say nothing of the kernel), children followed (the CUDA worker's kernel host, a
  // KernelBench candidate's build).
  return {find_cuda_tool(tool, "compute-sanitizer"), "--tool", "memcheck", "--print-limit", "4", "--show-backtrace",
          "no", "--target-processes", "all"};
}

namespace {

std::string capped(std::string s) {
  s = trim(s);
  if (s.size() > 300) s = s.substr(0, 297) + "...";
  return s;
}

}  // namespace

json parse_sanitizer_output(const std::string& output) {
  static const std::regex kAt(R"re(^at (.+?)(\+0x[0-9a-fA-F]+)?(?: in (.+))?$)re");
  static const std::regex kThread(R"re(^by thread \(([^)]*)\) in block \(([^)]*)\))re");
  std::istringstream in(output.substr(0, 1u << 20));
  std::string line;
  json fault, api;
  bool in_error = false;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind("=========", 0) != 0) continue;
    // The candidate can write these lines too: std::regex recurses per character, so a line
    // longer than any memcheck writes is cut before it is matched.
    if (line.size() > 4000) line.resize(4000);
    const bool indented = line.rfind("=========     ", 0) == 0;
    const std::string body = trim(line.substr(9));
    if (!indented) {
      if (in_error) break;  // the first error's block ended
      if (body.rfind("Invalid ", 0) == 0 || body.rfind("Misaligned ", 0) == 0 || body.rfind("Out-of-range ", 0) == 0 ||
          body.rfind("Malformed ", 0) == 0 || body.rfind("Illegal ", 0) == 0 || body.rfind("Warp ", 0) == 0) {
        fault = {{"error", capped(body)}, {"tool", "compute-sanitizer memcheck"}};
        in_error = true;
      } else if (api.is_null() && body.rfind("Program hit ", 0) == 0) {
        api = {{"error", capped(body)}, {"api_error", true}, {"tool", "compute-sanitizer memcheck"}};
      }
      continue;
    }
    if (!in_error) continue;
    std::smatch m;
    if (!fault.contains("kernel") && std::regex_match(body, m, kAt)) {
      fault["kernel"] = capped(m[1]);
      if (m[3].matched) fault["at"] = capped(m[3]);
      else if (m[2].matched) fault["at"] = capped(m[2]);
    } else if (!fault.contains("thread") && std::regex_search(body, m, kThread)) {
      fault["thread"] = "(" + capped(m[1]) + ")";
      fault["block"] = "(" + capped(m[2]) + ")";
    } else if (body.rfind("Address ", 0) == 0 || body.rfind("Access to ", 0) == 0 ||  // older and newer memcheck
               (fault.contains("address") && body.rfind("and is ", 0) == 0)) {
      fault["address"] = capped(fault.value("address", std::string()) + (fault.contains("address") ? " " : "") + body);
    }
  }
  return fault.is_null() ? api : fault;
}

std::string fault_line(const json& fault) {
  if (!fault.is_object()) return "";
  std::string out = fault.value("error", std::string("a fault"));
  if (fault.contains("kernel")) out += " in " + fault.value("kernel", std::string());
  if (fault.contains("at")) out += " at " + fault.value("at", std::string());
  if (fault.contains("thread"))
    out += fmt::format(", thread {} of block {}", fault.value("thread", std::string()), fault.value("block", std::string()));
  if (fault.contains("address")) out += ": " + fault.value("address", std::string());
  return out;
}

void add_fault(EvalResult& r, const std::string& tool_output, bool run_started, const std::string& run_error,
               double seconds) {
  r.details["diagnosis_seconds"] = seconds;
  if (!run_started) {
    r.details["fault_error"] = "cannot run compute-sanitizer: " + run_error;
    return;
  }
  json fault = parse_sanitizer_output(tool_output);
  if (fault.is_null()) {
    std::string said = tool_output.size() > 1000 ? tool_output.substr(tool_output.size() - 1000) : tool_output;
    r.details["fault_error"] = "compute-sanitizer reported no error in the call run again; it said: " + said;
    return;
  }
  if (fault.contains("kernel")) r.message += "; compute-sanitizer: " + fault_line(fault);
  r.details["fault"] = std::move(fault);
}

}  // namespace kmcts::cuda
