// The submissions agents: candidates written elsewhere (by any system, or by hand), read from
// a folder instead of generated, so kmcts evaluates and ranks existing generations without an
// LLM. The folder holds one sub-folder per problem, named as the problem (for a KernelBench
// file N_name.py, "N_name"), with candidate files <n>.py (or any name; numeric names sort by
// number). Every submission becomes a child of the root, in order, once each.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include <fmt/format.h>

#include "agents/roles.hpp"
#include "core/error.hpp"
#include "core/options.hpp"

KMCTS_OPTION("agents.submissions.dir", String, "", std::nullopt, std::nullopt,
             "Folder of submissions for agents.backend=submissions: <dir>/<problem name>/<n>.py, each evaluated once "
             "as a child of the root")

namespace kmcts::submissions {
namespace {

namespace fs = std::filesystem;

/// The problem's submission files: numeric stems by number first, then the rest by name.
std::vector<fs::path> submission_files(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().extension() == ".py") files.push_back(entry.path());
  auto number = [](const fs::path& p) -> long {
    const std::string stem = p.stem().string();
    return !stem.empty() && std::all_of(stem.begin(), stem.end(), ::isdigit) && stem.size() < 12 ? std::stol(stem) : -1;
  };
  std::sort(files.begin(), files.end(), [&](const fs::path& a, const fs::path& b) {
    const long na = number(a), nb = number(b);
    if ((na >= 0) != (nb >= 0)) return na >= 0;
    return na != nb ? na < nb : a.filename() < b.filename();
  });
  return files;
}

class SubmissionsPlanner final : public Planner {
 public:
  explicit SubmissionsPlanner(const Config& c) : root_(c.get_string("agents.submissions.dir")) {
    if (root_.empty()) throw InputError("agents.submissions.dir must name the folder of submissions");
    if (!fs::is_directory(root_))
      throw InputError(fmt::format("agents.submissions.dir: '{}' is not a folder", root_.string()));
  }

  PlanResult propose(const PlanContext& context) override {
    PlanResult result;
    result.exhausted = true;  // a failure here never passes on a retry
    if (context.parent.id != 0) {
      result.error = "submissions: every submission is a child of the root; nothing to expand here";
      return result;
    }
    const fs::path dir = root_ / context.problem->name;
    if (!fs::is_directory(dir)) {
      result.error = fmt::format("submissions: no folder '{}' for problem '{}'", dir.string(), context.problem->name);
      return result;
    }
    std::lock_guard lock(mutex_);
    if (!listed_) files_ = submission_files(dir), listed_ = true;
    // One per call, whatever context.count asks: spare plans queued on the root would be lost
    // when a concurrent call finds the folder used up and closes the root.
    if (next_ < files_.size()) {
      const fs::path& file = files_[next_++];
      Plan plan;
      plan.text = fmt::format("submission {}", file.filename().string());
      plan.data = {{"submission", file.string()}};
      result.plans.push_back(std::move(plan));
    }
    if (result.plans.empty())
      result.error = fmt::format("submissions: all {} submissions in '{}' were handed out", files_.size(), dir.string());
    else
      result.exhausted = false;
    return result;
  }

 private:
  fs::path root_;
  std::mutex mutex_;
  bool listed_ = false;
  std::vector<fs::path> files_;
  size_t next_ = 0;
};

class SubmissionsCoder final : public Coder {
 public:
  CodeResult write(const Problem&, const NodeView&, const Plan& plan) override {
    CodeResult r;
    const std::string file = plan.data.value("submission", std::string());
    std::ifstream in(file, std::ios::binary);
    if (file.empty() || !in) {
      r.error = fmt::format("submissions: cannot read submission '{}'", file);
      return r;
    }
    std::ostringstream text;
    text << in.rdbuf();
    r.ok = true;
    r.source = text.str();
    r.meta = {{"submission", file}};
    return r;
  }
};

/// Submissions are fixed: a failed one stays failed.
class SubmissionsDebugger final : public Debugger {
 public:
  CodeResult repair(const DebugContext&) override {
    CodeResult r;
    r.error = "submissions: a submission is evaluated as written; no repairs";
    return r;
  }
};

}  // namespace
}  // namespace kmcts::submissions

KMCTS_REGISTER(kmcts::PlannerRegistry, "submissions", [](const kmcts::Config& c) -> std::unique_ptr<kmcts::Planner> {
  return std::make_unique<kmcts::submissions::SubmissionsPlanner>(c);
})
KMCTS_REGISTER(kmcts::CoderRegistry, "submissions", [](const kmcts::Config&) -> std::unique_ptr<kmcts::Coder> {
  return std::make_unique<kmcts::submissions::SubmissionsCoder>();
})
KMCTS_REGISTER(kmcts::DebuggerRegistry, "submissions", [](const kmcts::Config&) -> std::unique_ptr<kmcts::Debugger> {
  return std::make_unique<kmcts::submissions::SubmissionsDebugger>();
})
