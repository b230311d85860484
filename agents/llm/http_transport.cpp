#include "agents/llm/http_transport.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cctype>
#include <deque>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "core/text.hpp"

namespace kmcts::llm {
namespace {

// curl_global_init is not thread-safe and must run once per process (REFERENCE.md).
void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Transfer {
  HttpRequest request;
  std::vector<std::pair<std::string, std::string>> secret_headers;
  std::promise<HttpResponse> promise;
  HttpResponse response;
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  char error[CURL_ERROR_SIZE] = {0};
  std::chrono::steady_clock::time_point last_activity = std::chrono::steady_clock::now();
};

// Every transport's requests in flight and the bytes their replies have brought so far.
std::atomic<int> g_requests{0};
std::atomic<int64_t> g_bytes{0};

size_t on_body(char* data, size_t size, size_t count, void* user) {
  static_cast<Transfer*>(user)->last_activity = std::chrono::steady_clock::now();
  g_bytes += static_cast<int64_t>(size * count);
  static_cast<Transfer*>(user)->response.body.append(data, size * count);
  return size * count;
}

size_t on_header(char* data, size_t size, size_t count, void* user) {
  static_cast<Transfer*>(user)->last_activity = std::chrono::steady_clock::now();
  std::string line(data, size * count);
  size_t colon = line.find(':');
  if (colon != std::string::npos) {
    std::string name = line.substr(0, colon), value = line.substr(colon + 1);
    name = to_lower(name);
    value.erase(0, value.find_first_not_of(" \t"));
    while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' ')) value.pop_back();
    static_cast<Transfer*>(user)->response.headers[name] = value;
  } else if (line.rfind("HTTP/", 0) == 0) {
    static_cast<Transfer*>(user)->response.headers.clear();  // a new response (after 100-continue, redirects)
  }
  return size * count;
}

}  // namespace

struct HttpTransport::Impl {
  HttpTimeouts timeouts;
  CURLM* multi = nullptr;
  std::mutex mutex;
  std::deque<std::unique_ptr<Transfer>> incoming;
  std::vector<std::unique_ptr<Transfer>> running;
  std::atomic<bool> stopping{false};
  std::thread thread;

  void start(std::unique_ptr<Transfer> t) {
    t->easy = curl_easy_init();
    CURL* e = t->easy;
    for (const auto& [name, value] : t->request.headers) t->headers = curl_slist_append(t->headers, (name + ": " + value).c_str());
    for (const auto& [name, value] : t->secret_headers) t->headers = curl_slist_append(t->headers, (name + ": " + value).c_str());
    t->headers = curl_slist_append(t->headers, "expect:");  // no 100-continue round trip
    curl_easy_setopt(e, CURLOPT_URL, t->request.url.c_str());
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, t->request.body.c_str());
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(t->request.body.size()));
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, t->headers);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, t.get());
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, t.get());
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t->error);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_PRIVATE, t.get());
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(1000 * timeouts.connect_s));
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(1000 * timeouts.total_s));
    // Stalls (no byte for stall_s) are caught by loop(): curl's low-speed limit does not
    // cover the wait for the first byte of the response, which is where servers hang.
    t->last_activity = std::chrono::steady_clock::now();
    curl_multi_add_handle(multi, e);
    running.push_back(std::move(t));
  }

  void finish(CURL* easy, CURLcode code, const std::string& why = "") {
    auto it = std::find_if(running.begin(), running.end(), [easy](const auto& t) { return t->easy == easy; });
    if (it == running.end()) return;
    std::unique_ptr<Transfer> t = std::move(*it);
    running.erase(it);
    g_requests -= 1;
    g_bytes -= static_cast<int64_t>(t->response.body.size());
    if (code == CURLE_OK) {
      long status = 0;
      curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
      t->response.status = static_cast<int>(status);
    } else {
      t->response.status = 0;
      t->response.error = !why.empty() ? why : t->error[0] ? t->error : curl_easy_strerror(code);
    }
    curl_multi_remove_handle(multi, easy);
    curl_easy_cleanup(easy);
    curl_slist_free_all(t->headers);
    t->promise.set_value(std::move(t->response));
  }

  void loop() {
    while (!stopping.load()) {
      {
        std::lock_guard lock(mutex);
        while (!incoming.empty()) {
          start(std::move(incoming.front()));
          incoming.pop_front();
        }
      }
      int still = 0;
      curl_multi_perform(multi, &still);
      int queued = 0;
      while (CURLMsg* m = curl_multi_info_read(multi, &queued))
        if (m->msg == CURLMSG_DONE) finish(m->easy_handle, m->data.result);
      const auto now = std::chrono::steady_clock::now();
      std::vector<CURL*> stalled;
      for (const auto& t : running)
        if (now - t->last_activity > std::chrono::duration<double>(timeouts.stall_s)) stalled.push_back(t->easy);
      for (CURL* easy : stalled)
        finish(easy, CURLE_OPERATION_TIMEDOUT, fmt::format("stalled: no data for {:g} s", timeouts.stall_s));
      curl_multi_poll(multi, nullptr, 0, 100, nullptr);  // woken early by post() and ~Impl
    }
    for (auto& t : running) {
      g_requests -= 1;
      g_bytes -= static_cast<int64_t>(t->response.body.size());
      curl_multi_remove_handle(multi, t->easy);
      curl_easy_cleanup(t->easy);
      curl_slist_free_all(t->headers);
      HttpResponse r;
      r.error = "transport stopped";
      t->promise.set_value(std::move(r));
    }
    running.clear();
    std::lock_guard lock(mutex);
    for (auto& t : incoming) {
      g_requests -= 1;
      HttpResponse r;
      r.error = "transport stopped";
      t->promise.set_value(std::move(r));
    }
    incoming.clear();
  }
};

HttpTransport::HttpTransport(HttpTimeouts timeouts) : impl_(std::make_unique<Impl>()) {
  global_init();
  impl_->timeouts = timeouts;
  impl_->multi = curl_multi_init();
  impl_->thread = std::thread([impl = impl_.get()] { impl->loop(); });
}

HttpTransport::~HttpTransport() {
  impl_->stopping.store(true);
  curl_multi_wakeup(impl_->multi);
  impl_->thread.join();
  curl_multi_cleanup(impl_->multi);
}

std::future<HttpResponse> HttpTransport::post(const HttpRequest& request,
                                              std::vector<std::pair<std::string, std::string>> secret_headers) {
  auto t = std::make_unique<Transfer>();
  t->request = request;
  t->secret_headers = std::move(secret_headers);
  auto future = t->promise.get_future();
  g_requests += 1;
  {
    std::lock_guard lock(impl_->mutex);
    impl_->incoming.push_back(std::move(t));
  }
  curl_multi_wakeup(impl_->multi);
  return future;
}

TransportActivity transport_activity() { return {g_requests.load(), g_bytes.load()}; }

}  // namespace kmcts::llm
