#include "hardware/kernelbench/warm_harness.hpp"

#include <exception>

namespace kmcts {

WarmHarness::WarmHarness(std::vector<std::string> argv, std::filesystem::path cwd, bool reusable)
    : argv_(std::move(argv)), cwd_(std::move(cwd)), reusable_(reusable) {}

void WarmHarness::prestart() {
  std::lock_guard lock(mutex_);
  if (!idle_.empty() || busy_ > 0) return;
  try {
    idle_.push_back(std::make_unique<WarmProcess>(argv_, cwd_));
  } catch (const std::exception&) {  // said by the request that needs one
  }
}

std::unique_ptr<WarmProcess> WarmHarness::take() {
  std::lock_guard lock(mutex_);
  std::unique_ptr<WarmProcess> process;
  while (!idle_.empty() && !process) {
    process = std::move(idle_.back());
    idle_.pop_back();
    if (!process->usable()) process.reset();
  }
  if (!process) process = std::make_unique<WarmProcess>(argv_, cwd_);  // may throw: the caller says why
  ++busy_;
  if (!reusable_) {  // the next candidate's process gets ready while this one works
    try {
      idle_.push_back(std::make_unique<WarmProcess>(argv_, cwd_));
    } catch (const std::exception&) {
    }
  }
  return process;
}

void WarmHarness::give_back(std::unique_ptr<WarmProcess> process, bool retire) {
  std::lock_guard lock(mutex_);
  --busy_;
  if (!retire && reusable_ && process->usable()) {
    idle_.push_back(std::move(process));
    return;
  }
  process.reset();  // ends it (its whole process group)
  if (idle_.empty() && busy_ == 0) {
    try {
      idle_.push_back(std::make_unique<WarmProcess>(argv_, cwd_));  // a replacement, started ahead
    } catch (const std::exception&) {
    }
  }
}

WarmHarness::Outcome WarmHarness::request(const nlohmann::json& request, double timeout_s) {
  Outcome outcome;
  std::unique_ptr<WarmProcess> process;
  try {
    process = take();
  } catch (const std::exception& e) {
    outcome.start_error = e.what();
    return outcome;
  }
  outcome.reply = process->request(request.dump(), timeout_s);
  bool retire = true;
  if (outcome.reply.line) {
    try {
      retire = nlohmann::json::parse(*outcome.reply.line).value("retire", true);
    } catch (const std::exception&) {
    }
  }
  give_back(std::move(process), retire);
  return outcome;
}

}  // namespace kmcts
