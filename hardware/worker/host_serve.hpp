#pragma once
// The kernel host's side of a HostLink (host_link.hpp): requests one JSON line each on fd 0,
// replies on fd 3. Shared by kmcts-cuda-host and the CPU worker's forked hosts.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kmcts::worker {

inline constexpr int kHostRequestFd = 0;
inline constexpr int kHostReplyFd = 3;

/// The next request line; nullopt at the end of input (the worker is gone).
std::optional<std::string> next_request();
/// One reply line; a reply that cannot be written ends the host.
void send_reply(const nlohmann::json& reply);
/// send_reply, then ends the process at once (threads a kernel left behind die with it).
[[noreturn]] void send_reply_and_exit(const nlohmann::json& reply, int code);

}  // namespace kmcts::worker
