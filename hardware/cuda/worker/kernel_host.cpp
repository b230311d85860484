#include "hardware/cuda/worker/kernel_host.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <vector>

#include <fmt/format.h>

extern char** environ;

namespace kmcts::worker {
namespace {

using nlohmann::json;
constexpr size_t kMaxReplyBytes = size_t{1} << 20;

std::string host_binary() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw HostFailure(false, "cannot find the worker's own binary: " + ec.message());
  return (self.parent_path() / "kmcts-cuda-host").string();
}

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) return fmt::format("killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  return "ended";
}

json tensors_json(const DeviceTensors& t) {
  json list = json::array();
  for (int32_t i = 0; i < t.count(); ++i) {
    const kmcts_tensor& v = t.view(static_cast<size_t>(i));
    list.push_back({{"arena", t.arena()->id()},
                    {"offset", t.offset(static_cast<size_t>(i))},
                    {"dtype", v.dtype},
                    {"shape", std::vector<int64_t>(v.shape, v.shape + v.ndim)}});
  }
  return list;
}

}  // namespace

KernelHost::KernelHost(bool candidate, const std::string& kernel, int device, bool tracing) : candidate_(candidate) {
  // Nothing under this uid may read this process's memory or environment, nor ptrace it.
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  int request[2], reply[2];
  if (pipe2(request, O_CLOEXEC) != 0 || pipe2(reply, O_CLOEXEC) != 0)
    throw HostFailure(candidate, std::string("pipe: ") + strerror(errno));
  const std::string binary = host_binary();
  std::vector<std::string> args = {binary, "--device", std::to_string(device), "--kernel", kernel};
  if (!tracing) args.push_back("--no-tracing");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, request[0], 0);
  posix_spawn_file_actions_adddup2(&actions, reply[1], 3);
  posix_spawn_file_actions_addclosefrom_np(&actions, 4);  // the worker's result channel above all
  const int rc = posix_spawn(&pid_, binary.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(request[0]);
  close(reply[1]);
  to_host_ = request[1];
  from_host_ = reply[0];
  if (rc != 0) throw HostFailure(candidate, fmt::format("cannot start {}: {}", binary, strerror(rc)));
}

void KernelHost::wait_ready() {
  const bool candidate = candidate_;
  const json ready = json::parse(read_line("startup"), nullptr, false);
  if (ready.is_object() && ready.contains("load_error")) {
    load_error_ = ready["load_error"].is_string() ? ready["load_error"].get<std::string>() : "cannot be loaded";
    return;
  }
  if (!ready.is_object() || !ready.contains("ready")) {
    if (ready.is_object() && ready.contains("error") && ready["error"].is_string())
      throw HostFailure(candidate, ready["error"].get<std::string>());
    gone("startup", "its first reply was not the ready line");
  }
  launch_stream_ = ready.value("launch_stream", 0u);
}

KernelHost::~KernelHost() {
  if (to_host_ >= 0) close(to_host_);
  if (from_host_ >= 0) close(from_host_);
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

void KernelHost::gone(const std::string& phase, const std::string& why) {
  std::string how = why;
  if (pid_ > 0) {
    int status = 0;
    kill(pid_, SIGKILL);  // a host that broke the protocol is ended too
    if (waitpid(pid_, &status, 0) == pid_ && why.empty()) how = describe_status(status);
    pid_ = -1;
  }
  throw HostFailure(candidate_, fmt::format("the {}'s process {} ({})", candidate_ ? "candidate" : "reference",
                                            how.empty() ? "ended" : how, phase));
}

std::string KernelHost::read_line(const std::string& phase) {
  for (;;) {
    if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    if (buffer_.size() > kMaxReplyBytes) gone(phase, "sent a reply over 1 MiB");
    char chunk[8192];
    const ssize_t n = ::read(from_host_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) gone(phase, "");
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

json KernelHost::request(const json& r, const std::string& phase) {
  const std::string text = r.dump() + "\n";
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(to_host_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) gone(phase, "");
    done += static_cast<size_t>(n);
  }
  json reply = json::parse(read_line(phase), nullptr, false);
  if (!reply.is_object()) gone(phase, "sent a reply that is not a JSON object");
  if (reply.contains("error")) gone(phase, "failed: " + reply["error"].dump());
  return reply;
}

int KernelHost::bind(const DeviceTensors& inputs, const DeviceTensors& outputs) {
  const auto id = std::make_pair(static_cast<const void*>(&inputs), static_cast<const void*>(&outputs));
  if (auto known = keys_.find(id); known != keys_.end()) return known->second;
  const int key = static_cast<int>(keys_.size());
  json arenas = json::array();
  for (const DeviceArena* a : {inputs.arena(), outputs.arena()})
    if (!arenas_sent_[a->id()]) arenas.push_back({{"id", a->id()}, {"handle", a->ipc_handle()}}), arenas_sent_[a->id()] = true;
  const json reply = request(
      {{"op", "bind"}, {"key", key}, {"arenas", arenas}, {"inputs", tensors_json(inputs)}, {"outputs", tensors_json(outputs)}},
      "binding buffers");
  if (!reply.value("ok", false)) gone("binding buffers", "refused: " + reply.dump().substr(0, 200));
  keys_[id] = key;
  return key;
}

}  // namespace kmcts::worker
