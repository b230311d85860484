#include "hardware/worker/host_serve.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace kmcts::worker {

std::optional<std::string> next_request() {
  static std::string buffer;
  for (;;) {
    if (auto nl = buffer.find('\n'); nl != std::string::npos) {
      std::string line = buffer.substr(0, nl);
      buffer.erase(0, nl + 1);
      return line;
    }
    char chunk[4096];
    const ssize_t n = ::read(kHostRequestFd, chunk, sizeof chunk);
    if (n <= 0) return std::nullopt;
    buffer.append(chunk, static_cast<size_t>(n));
  }
}

void send_reply(const nlohmann::json& reply) {
  const std::string text = reply.dump() + "\n";
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(kHostReplyFd, text.data() + done, text.size() - done);
    if (n <= 0) std::_Exit(4);
    done += static_cast<size_t>(n);
  }
}

void send_reply_and_exit(const nlohmann::json& reply, int code) {
  send_reply(reply);
  std::fflush(nullptr);
  std::_Exit(code);
}

}  // namespace kmcts::worker
