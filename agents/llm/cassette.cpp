#include "agents/llm/cassette.hpp"

#include <fstream>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/hash.hpp"

namespace kmcts::llm {

using nlohmann::json;

CassetteMode cassette_mode_from_string(const std::string& name, const std::string& option) {
  if (name == "off") return CassetteMode::off;
  if (name == "record") return CassetteMode::record;
  if (name == "replay") return CassetteMode::replay;
  if (name == "replay_or_record") return CassetteMode::replay_or_record;
  throw InputError(fmt::format("{}: unknown cassette mode '{}' (known: off, record, replay, replay_or_record)", option, name));
}

json normalised(const ChatRequest& r) {
  json messages = json::array();
  for (const auto& m : r.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
  json key = {{"model", r.model}, {"system", r.system}, {"messages", messages}, {"temperature", r.temperature},
              {"top_p", r.top_p}, {"max_tokens", r.max_tokens}};
  if (!r.reasoning_effort.empty()) key["reasoning_effort"] = r.reasoning_effort;  // older cassettes' keys unchanged
  if (r.thinking_budget > 0) key["thinking_budget"] = r.thinking_budget;
  return key;
}

std::string cassette_key(const ChatRequest& r) {
  return sha256_hex(normalised(r).dump()) + "#" + std::to_string(r.sample);
}

namespace {

json reply_to_json(const ChatReply& r) {
  return {{"text", r.text}, {"finish_reason", r.finish_reason}, {"model", r.model}, {"usage", r.usage.to_json()}};
}

ChatReply reply_from_json(const json& j) {
  ChatReply r;
  r.text = j.at("text").get<std::string>();
  r.finish_reason = j.value("finish_reason", "");
  r.model = j.value("model", "");
  const json u = j.value("usage", json::object());
  r.usage.prompt_tokens = u.value("prompt_tokens", int64_t{0});
  r.usage.cached_tokens = u.value("cached_tokens", int64_t{0});
  r.usage.completion_tokens = u.value("completion_tokens", int64_t{0});
  r.usage.reasoning_tokens = u.value("reasoning_tokens", int64_t{0});
  return r;
}

}  // namespace

Cassette::Cassette(std::filesystem::path file) : file_(std::move(file)) {
  std::ifstream in(file_);
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.empty()) continue;
    try {
      json j = json::parse(line);
      replies_.emplace(j.at("key").get<std::string>(), reply_from_json(j.at("reply")));
    } catch (const std::exception& e) {
      throw InputError(fmt::format("{}:{}: not a cassette entry ({})", file_.string(), line_no, e.what()));
    }
  }
}

std::optional<ChatReply> Cassette::find(const ChatRequest& request) const {
  std::lock_guard lock(mutex_);
  if (auto it = replies_.find(cassette_key(request)); it != replies_.end()) return it->second;
  return std::nullopt;
}

void Cassette::record(const ChatRequest& request, const ChatReply& reply) {
  const std::string key = cassette_key(request);
  std::lock_guard lock(mutex_);
  if (!replies_.emplace(key, reply).second) return;
  if (file_.has_parent_path()) std::filesystem::create_directories(file_.parent_path());
  std::ofstream out(file_, std::ios::app);
  out << json{{"key", key}, {"sample", request.sample}, {"request", normalised(request)}, {"reply", reply_to_json(reply)}}.dump()
      << "\n";
  out.flush();
  if (!out) throw RunError("cannot append to cassette " + file_.string());
}

size_t Cassette::size() const {
  std::lock_guard lock(mutex_);
  return replies_.size();
}

}  // namespace kmcts::llm
