#pragma once
// A cassette: recorded LLM replies keyed by what was asked, so an LLM-driven run re-runs
// offline, bit for bit. The key is the SHA-256 of the whole normalised request (model,
// system prompt, messages, temperature, top_p, max_tokens; not the endpoint or the key) plus
// the sample index: k identical requests get k recorded replies, whatever order they come
// back in (keying by arrival order would break as soon as two calls race).
//
// Stored as one JSON object per line (cassette.jsonl): append-only, readable, mergeable.
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "agents/llm/chat.hpp"

namespace kmcts::llm {

enum class CassetteMode { off, record, replay, replay_or_record };
/// "off", "record", "replay", "replay_or_record"; else an InputError naming `option`.
CassetteMode cassette_mode_from_string(const std::string& name, const std::string& option);

/// The request as the key sees it (also stored beside each reply, for people).
nlohmann::json normalised(const ChatRequest& request);
/// sha256 of normalised(request) (without the sample) and the sample index.
std::string cassette_key(const ChatRequest& request);

class Cassette {
 public:
  /// Loads `file` if it exists (InputError naming the file and line if a line is corrupt).
  explicit Cassette(std::filesystem::path file);
  std::optional<ChatReply> find(const ChatRequest& request) const;
  /// Appends the reply (and keeps it for find); a key already recorded is left as it was.
  void record(const ChatRequest& request, const ChatReply& reply);
  size_t size() const;
  const std::filesystem::path& file() const { return file_; }

 private:
  std::filesystem::path file_;
  mutable std::mutex mutex_;
  std::map<std::string, ChatReply> replies_;
};

}  // namespace kmcts::llm
