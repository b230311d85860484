#include "agents/llm/mock_server.hpp"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <list>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "core/text.hpp"

namespace kmcts::llm {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using nlohmann::json;

double MockFaults::total() const {
  return rate_429 + rate_429_bare + rate_500 + rate_529 + rate_slow + rate_slow_stream + rate_cut_stream + rate_malformed + rate_truncated +
         rate_no_code;
}

namespace {

enum class Fault { none, r429, r429_bare, r500, r529, slow, slow_stream, cut_stream, malformed, truncated, no_code };

Fault draw_fault(const MockFaults& f, double u) {
  const std::pair<double, Fault> table[] = {{f.rate_429, Fault::r429},           {f.rate_429_bare, Fault::r429_bare},
                                            {f.rate_500, Fault::r500},           {f.rate_529, Fault::r529},
                                            {f.rate_slow, Fault::slow},          {f.rate_slow_stream, Fault::slow_stream},
                                            {f.rate_cut_stream, Fault::cut_stream},
                                            {f.rate_malformed, Fault::malformed}, {f.rate_truncated, Fault::truncated},
                                            {f.rate_no_code, Fault::no_code}};
  for (const auto& [rate, fault] : table) {
    if (u < rate) return fault;
    u -= rate;
  }
  return Fault::none;
}

std::string reply_body(const std::string& provider, const std::string& text, const std::string& model) {
  const int prompt = 100, completion = static_cast<int>(text.size() / 4 + 1);
  if (provider == "anthropic")
    return json{{"id", "msg_mock"}, {"type", "message"}, {"role", "assistant"}, {"model", model},
                {"content", {{{"type", "text"}, {"text", text}}}}, {"stop_reason", "end_turn"},
                {"usage", {{"input_tokens", prompt}, {"output_tokens", completion}}}}
        .dump();
  return json{{"id", "chatcmpl-mock"}, {"object", "chat.completion"}, {"model", model},
              {"choices", {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", text}}}, {"finish_reason", "stop"}}}},
              {"usage", {{"prompt_tokens", prompt}, {"completion_tokens", completion}, {"total_tokens", prompt + completion}}}}
      .dump();
}

// The reply as the provider streams it (server-sent events): the text in a few deltas, then the
// finish reason, the usage and the end event.
std::vector<std::string> reply_events(const std::string& provider, const std::string& text, const std::string& model) {
  const int prompt = 100, completion = static_cast<int>(text.size() / 4 + 1);
  std::vector<std::string> pieces;
  const size_t step = std::max<size_t>(1, text.size() / 4 + 1);
  for (size_t at = 0; at < text.size(); at += step) pieces.push_back(text.substr(at, step));
  std::vector<std::string> out;
  auto data = [&out](const json& j) { out.push_back("data: " + j.dump() + "\n\n"); };
  auto event = [&out](const std::string& type, const json& j) {
    out.push_back("event: " + type + "\ndata: " + j.dump() + "\n\n");
  };
  if (provider == "anthropic") {
    event("message_start", {{"type", "message_start"},
                            {"message", {{"id", "msg_mock"}, {"type", "message"}, {"role", "assistant"}, {"model", model},
                                         {"content", json::array()}, {"usage", {{"input_tokens", prompt}, {"output_tokens", 1}}}}}});
    event("content_block_start", {{"type", "content_block_start"}, {"index", 0}, {"content_block", {{"type", "text"}, {"text", ""}}}});
    event("ping", {{"type", "ping"}});
    for (const auto& p : pieces)
      event("content_block_delta", {{"type", "content_block_delta"}, {"index", 0}, {"delta", {{"type", "text_delta"}, {"text", p}}}});
    event("content_block_stop", {{"type", "content_block_stop"}, {"index", 0}});
    event("message_delta", {{"type", "message_delta"}, {"delta", {{"stop_reason", "end_turn"}}}, {"usage", {{"output_tokens", completion}}}});
    event("message_stop", {{"type", "message_stop"}});
    return out;
  }
  auto chunk = [&model](json choices) {
    return json{{"id", "chatcmpl-mock"}, {"object", "chat.completion.chunk"}, {"model", model}, {"choices", std::move(choices)}};
  };
  data(chunk({{{"index", 0}, {"delta", {{"role", "assistant"}, {"content", ""}}}, {"finish_reason", nullptr}}}));
  for (const auto& p : pieces) data(chunk({{{"index", 0}, {"delta", {{"content", p}}}, {"finish_reason", nullptr}}}));
  data(chunk({{{"index", 0}, {"delta", json::object()}, {"finish_reason", "stop"}}}));
  json last = chunk(json::array());
  last["usage"] = {{"prompt_tokens", prompt}, {"completion_tokens", completion}, {"total_tokens", prompt + completion}};
  data(last);
  out.push_back("data: [DONE]\n\n");
  return out;
}

std::string error_body(const std::string& provider, const std::string& type, const std::string& message) {
  if (provider == "anthropic") return json{{"type", "error"}, {"error", {{"type", type}, {"message", message}}}}.dump();
  return json{{"error", {{"message", message}, {"type", type}, {"param", nullptr}, {"code", nullptr}}}}.dump();
}

}  // namespace

struct MockLlmServer::Impl {
  MockAnswerer answerer;
  ModelProfiles profiles = ModelProfiles::load();  // guarded by mutex
  MockFaults faults;
  uint64_t seed = 0;
  asio::io_context io;
  tcp::acceptor acceptor{io};
  std::thread accept_thread;
  std::atomic<bool> stopping{false};
  std::atomic<uint64_t> counter{0};
  MockStats stats;
  mutable std::mutex mutex;  // guards sockets, threads and the last request
  std::list<std::shared_ptr<tcp::socket>> sockets;
  std::vector<std::thread> threads;
  std::map<std::string, std::string> last_headers;
  std::string last_body;
  std::string required_key;

  void accept_loop() {
    while (!stopping.load()) {
      auto socket = std::make_shared<tcp::socket>(io);
      beast::error_code ec;
      acceptor.accept(*socket, ec);
      if (ec || stopping.load()) break;
      std::lock_guard lock(mutex);
      sockets.push_back(socket);
      threads.emplace_back([this, socket] { serve(socket); });
    }
  }

  void serve(const std::shared_ptr<tcp::socket>& socket) {
    beast::flat_buffer buffer;
    while (!stopping.load()) {
      http::request<http::string_body> request;
      beast::error_code ec;
      http::read(*socket, buffer, request, ec);
      if (ec) break;
      if (!answer(*socket, request)) break;
      if (!request.keep_alive()) break;
    }
    beast::error_code ignored;
    socket->shutdown(tcp::socket::shutdown_both, ignored);
  }

  // Returns false when the connection must close (a truncated reply).
  bool answer(tcp::socket& socket, const http::request<http::string_body>& request) {
    const uint64_t n = counter++;
    stats.requests++;
    const std::string target(request.target());
    const std::string provider = target.find("/v1/messages") != std::string::npos ? "anthropic" : "openai";
    std::string key;
    {
      std::lock_guard lock(mutex);
      key = required_key;
      last_headers.clear();
      for (const auto& field : request) {
        last_headers[to_lower(std::string(field.name_string()))] = std::string(field.value());
      }
      last_body = request.body();
    }
    http::response<http::string_body> response{http::status::ok, request.version()};
    response.set(http::field::content_type, "application/json");
    response.keep_alive(request.keep_alive());
    if (!key.empty()) {
      std::string sent(request["x-api-key"]);
      if (std::string bearer(request[http::field::authorization]); bearer.rfind("Bearer ", 0) == 0) sent = bearer.substr(7);
      if (sent != key) {
        response.result(http::status::unauthorized);
        response.body() = error_body(provider, "invalid_request_error", "Incorrect API key provided: " + sent);
        return send(socket, response);
      }
    }
    json body = json::parse(request.body(), nullptr, false);
    if (body.is_discarded() || !body.is_object() || !body.contains("messages")) {
      response.result(http::status::bad_request);
      response.body() = error_body(provider, "invalid_request_error", "request body is not a chat request");
      return send(socket, response);
    }
    std::string system = body.value("system", ""), user;
    for (const auto& m : body["messages"]) {
      if (!m.is_object() || !m.contains("content") || !m["content"].is_string()) continue;
      if (m.value("role", "") == "system") system = m["content"].get<std::string>();
      if (m.value("role", "") == "user") user = m["content"].get<std::string>();
    }
    const std::string model = body.value("model", "mock");
    {
      std::lock_guard lock(mutex);
      const auto refused = provider_refusal(
          profiles.find(provider == "anthropic" ? Provider::anthropic : Provider::openai, model), body);
      if (refused) {
        response.result(static_cast<http::status>(refused->first));
        response.body() = refused->second;
        return send(socket, response);
      }
    }
    CounterRng rng(seed, n);
    const Fault fault = draw_fault(faults, rng.uniform());
    if (fault != Fault::none) stats.faults++;
    switch (fault) {
      case Fault::r429:
        response.result(http::status::too_many_requests);
        response.set("retry-after-ms", "50");
        response.body() = error_body(provider, "rate_limit_error", "mock: slow down");
        return send(socket, response);
      case Fault::r429_bare:
        response.result(http::status::too_many_requests);
        response.body() = error_body(provider, "rate_limit_error", "mock: slow down (no retry header)");
        return send(socket, response);
      case Fault::r500:
        response.result(http::status::internal_server_error);
        response.body() = error_body(provider, "server_error", "mock: internal error");
        return send(socket, response);
      case Fault::r529:
        response.result(static_cast<http::status>(529));
        response.body() = error_body(provider, "overloaded_error", "mock: overloaded");
        return send(socket, response);
      case Fault::slow:
        for (double waited = 0; waited < faults.slow_s && !stopping.load(); waited += 0.05)
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
        break;
      case Fault::malformed:
        response.body() = "{\"choices\": [{\"message\": {\"content\": \"unterminated";
        return send(socket, response);
      case Fault::no_code:
        response.body() = reply_body(provider, "I would rather not write code today.", model);
        return send(socket, response);
      default:
        break;
    }
    const std::string text = answerer(provider, system, user);
    if (body.value("stream", false) && fault != Fault::truncated)
      return stream(socket, request, reply_events(provider, text, model), fault == Fault::slow_stream ? faults.slow_s : 0.0,
                    fault == Fault::cut_stream);
    response.body() = reply_body(provider, text, model);
    if (fault == Fault::truncated) {
      // Headers promise the whole body; half of it arrives, then the connection closes.
      response.prepare_payload();
      const std::string full = response.body();
      response.body() = full.substr(0, full.size() / 2);
      response.set(http::field::content_length, std::to_string(full.size()));
      http::serializer<false, http::string_body> sr{response};
      beast::error_code ec;
      http::write(socket, sr, ec);
      return false;
    }
    return send(socket, response);
  }

  // An event stream, chunk by chunk; `spread_s` of silence spread between the events (a model
  // that streams slowly: no gap as long as the whole); `cut`: the connection closes after half
  // the events, with no end of stream.
  bool stream(tcp::socket& socket, const http::request<http::string_body>& request, const std::vector<std::string>& events,
              double spread_s, bool cut) {
    http::response<http::empty_body> head{http::status::ok, request.version()};
    head.set(http::field::content_type, "text/event-stream");
    head.keep_alive(request.keep_alive());
    head.chunked(true);
    http::response_serializer<http::empty_body> sr{head};
    beast::error_code ec;
    http::write_header(socket, sr, ec);
    const auto gap = std::chrono::duration<double>(events.empty() ? 0.0 : spread_s / static_cast<double>(events.size()));
    const size_t sent = cut ? events.size() / 2 : events.size();
    for (size_t i = 0; i < sent; ++i) {
      // the gap in short sleeps, so that stopping the server does not wait for a slow stream
      for (auto slept = std::chrono::duration<double>(0); slept < gap && !stopping.load(); slept += std::chrono::milliseconds(20))
        std::this_thread::sleep_for(std::min<std::chrono::duration<double>>(gap - slept, std::chrono::milliseconds(20)));
      if (ec || stopping.load()) return false;
      asio::write(socket, http::make_chunk(asio::buffer(events[i])), ec);
    }
    if (cut) return false;  // the caller closes the connection
    if (!ec) asio::write(socket, http::make_chunk_last(), ec);
    return !ec;
  }

  static bool send(tcp::socket& socket, http::response<http::string_body>& response) {
    response.prepare_payload();
    beast::error_code ec;
    http::write(socket, response, ec);
    return !ec;
  }
};

MockLlmServer::MockLlmServer(int port, MockAnswerer answerer, MockFaults faults, uint64_t seed)
    : impl_(std::make_unique<Impl>()) {
  impl_->answerer = std::move(answerer);
  impl_->faults = faults;
  impl_->seed = seed;
  tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port));
  impl_->acceptor.open(endpoint.protocol());
  impl_->acceptor.set_option(asio::socket_base::reuse_address(true));
  impl_->acceptor.bind(endpoint);
  impl_->acceptor.listen();
  impl_->accept_thread = std::thread([impl = impl_.get()] { impl->accept_loop(); });
}

MockLlmServer::~MockLlmServer() {
  impl_->stopping.store(true);
  beast::error_code ignored;
  {
    // Wake the accept() with a connection of our own, then close every open socket.
    tcp::socket poke(impl_->io);
    poke.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port())), ignored);
  }
  impl_->accept_thread.join();
  impl_->acceptor.close(ignored);
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(impl_->mutex);
    for (auto& s : impl_->sockets) s->shutdown(tcp::socket::shutdown_both, ignored);
    threads.swap(impl_->threads);
  }
  for (auto& t : threads) t.join();
}

void MockLlmServer::enforce_profiles(ModelProfiles profiles) {
  std::lock_guard lock(impl_->mutex);
  impl_->profiles = std::move(profiles);
}

void MockLlmServer::require_key(std::string key) {
  std::lock_guard lock(impl_->mutex);
  impl_->required_key = std::move(key);
}

int MockLlmServer::port() const { return impl_->acceptor.local_endpoint().port(); }
std::string MockLlmServer::base_url() const { return fmt::format("http://127.0.0.1:{}", port()); }
const MockStats& MockLlmServer::stats() const { return impl_->stats; }

std::map<std::string, std::string> MockLlmServer::last_headers() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->last_headers;
}

std::string MockLlmServer::last_body() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->last_body;
}

MockAnswerer script_answerer(std::vector<std::string> replies) {
  auto state = std::make_shared<std::pair<std::mutex, size_t>>();
  auto script = std::make_shared<std::vector<std::string>>(std::move(replies));
  return [state, script](const std::string&, const std::string&, const std::string&) {
    std::lock_guard lock(state->first);
    if (state->second >= script->size()) return std::string("mock: the script of replies is exhausted");
    return (*script)[state->second++];
  };
}

MockAnswerer session_answerer(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw InputError("mock-llm --session: cannot read " + file);
  const json j = json::parse(in, nullptr, false);
  if (!j.is_object() || !j.contains("replies") || !j["replies"].is_array())
    throw InputError("mock-llm --session: " + file + " must hold {\"replies\": [{\"when\": ..., \"file\" or \"reply\": ...}]}");
  struct Entry {
    std::vector<std::string> when;  // every one must occur (in the system prompt or the user message)
    std::string reply;
  };
  auto entries = std::make_shared<std::vector<Entry>>();
  const std::filesystem::path dir = std::filesystem::path(file).parent_path();
  size_t k = 0;
  for (const json& e : j["replies"]) {
    const std::string where = fmt::format("mock-llm --session: {}: replies[{}]", file, k++);
    Entry entry;
    if (e.is_object() && e.contains("when") && e["when"].is_string()) entry.when = {e["when"].get<std::string>()};
    if (e.is_object() && e.contains("when") && e["when"].is_array())
      for (const json& w : e["when"])
        if (w.is_string()) entry.when.push_back(w.get<std::string>());
    if (entry.when.empty() || (e["when"].is_array() && entry.when.size() != e["when"].size()))
      throw InputError(where + " needs a 'when': a text the request must hold, or a list of texts it must all hold");
    if (e.contains("file") && e["file"].is_string()) {
      std::ifstream reply(dir / e["file"].get<std::string>());
      if (!reply) throw InputError(where + ": cannot read " + (dir / e["file"].get<std::string>()).string());
      entry.reply.assign(std::istreambuf_iterator<char>(reply), std::istreambuf_iterator<char>());
    } else if (e.contains("reply") && e["reply"].is_string()) {
      entry.reply = e["reply"].get<std::string>();
    } else {
      throw InputError(where + " needs a 'file' (beside the session file) or a 'reply'");
    }
    entries->push_back(std::move(entry));
  }
  auto used = std::make_shared<std::pair<std::mutex, std::vector<bool>>>();
  used->second.assign(entries->size(), false);
  return [entries, used](const std::string&, const std::string& system, const std::string& user) {
    std::lock_guard lock(used->first);
    auto holds = [&](const Entry& e) {
      return std::all_of(e.when.begin(), e.when.end(), [&](const std::string& w) {
        return user.find(w) != std::string::npos || system.find(w) != std::string::npos;
      });
    };
    for (size_t i = 0; i < entries->size(); ++i)
      if (!used->second[i] && holds((*entries)[i])) {
        used->second[i] = true;
        return (*entries)[i].reply;
      }
    return std::string("mock: the session has no reply left for this request");
  };
}

MockAnswerer cassette_answerer(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw InputError("mock-llm --cassette: cannot read " + file);
  auto replies = std::make_shared<std::map<std::pair<std::string, std::string>, std::string>>();
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.empty()) continue;
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.contains("request") || !j.contains("reply"))
      throw InputError(fmt::format("{}:{}: not a cassette entry", file, line_no));
    std::string user;
    for (const auto& m : j["request"].value("messages", json::array()))
      if (m.value("role", "") == "user") user = m.value("content", "");
    replies->emplace(std::pair{j["request"].value("system", ""), user}, j["reply"].value("text", ""));
  }
  return [replies](const std::string&, const std::string& system, const std::string& user) {
    auto it = replies->find({system, user});
    return it == replies->end() ? std::string("mock: the cassette has no reply for this prompt") : it->second;
  };
}

}  // namespace kmcts::llm
