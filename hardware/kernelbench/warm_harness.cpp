#include "hardware/kernelbench/warm_harness.hpp"

#include <exception>
#include <random>

#include <fmt/format.h>

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
  return process;
}

void WarmHarness::give_back(std::unique_ptr<WarmProcess> process, bool retire) {
  std::unique_ptr<WarmProcess> ended;  // ended after the lock is released (it waits for the child)
  std::lock_guard lock(mutex_);
  --busy_;
  if (!retire && reusable_ && process->usable()) {
    idle_.push_back(std::move(process));
    return;
  }
  ended = std::move(process);
  // The next candidate's process, started now that this one's measurement is over (started
  // earlier, its imports and CUDA context would run beside the timing).
  if (idle_.empty()) {
    try {
      idle_.push_back(std::make_unique<WarmProcess>(argv_, cwd_));
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
  // A token only this request carries: a reply line without it was written by someone else
  // (a candidate that found the process's output descriptor).
  static thread_local std::mt19937_64 random_bits{std::random_device{}()};
  const std::string nonce = fmt::format("{:016x}{:016x}", random_bits(), random_bits());
  nlohmann::json sent = request;
  sent["nonce"] = nonce;
  outcome.reply = process->request(sent.dump(), timeout_s);
  bool retire = true;
  if (outcome.reply.line) {
    try {
      const nlohmann::json reply = nlohmann::json::parse(*outcome.reply.line);
      retire = reply.value("retire", true);
      outcome.forged = !reply.is_object() || reply.value("nonce", std::string()) != nonce;
    } catch (const std::exception&) {
      outcome.forged = false;  // not JSON: said as such by the caller
    }
  }
  if (outcome.forged || process->has_unread_output()) retire = true;  // lines it was not asked for
  give_back(std::move(process), retire);
  return outcome;
}

}  // namespace kmcts
