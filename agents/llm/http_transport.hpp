#pragma once
// HTTP for LLM calls: one libcurl multi handle driven by one thread carries every request in
// flight, so a hundred slow completions cost one thread, not a hundred (REFERENCE.md: never
// let blocking waits hold TBB's threads; one multi handle driven by one thread).
// Timeouts: connect, stall (no byte received for stall_s) and total. A transport failure
// (refused, reset, timed out) is a response with status 0 and the curl error text.
#include <future>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "agents/llm/wire.hpp"

namespace kmcts::llm {

struct HttpResponse {
  int status = 0;                              // 0: no HTTP response (see error)
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  std::string error;                           // transport error, when status is 0
};

struct HttpTimeouts {
  double connect_s = 10;
  double stall_s = 60;    // no data for this long aborts (a hung server)
  double total_s = 600;   // whole request, reply included
};

class HttpTransport {
 public:
  explicit HttpTransport(HttpTimeouts timeouts);
  /// Fails the requests still in flight (status 0, "transport stopped") and joins the thread.
  ~HttpTransport();
  HttpTransport(const HttpTransport&) = delete;
  HttpTransport& operator=(const HttpTransport&) = delete;

  /// Queues a POST; `secret_headers` (the auth header) are sent but kept out of every error
  /// text. Thread-safe.
  std::future<HttpResponse> post(const HttpRequest& request,
                                 std::vector<std::pair<std::string, std::string>> secret_headers = {});

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// What every transport of the process has in flight: requests, and the reply bytes they have
/// brought so far (a streamed reply grows as it arrives). For progress display.
struct TransportActivity {
  int requests = 0;
  int64_t bytes = 0;
};
TransportActivity transport_activity();

}  // namespace kmcts::llm
