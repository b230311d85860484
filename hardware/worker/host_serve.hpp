#pragma once
// The kernel host's side of a HostLink (host_link.hpp): requests one JSON line each on fd 0,
// replies on fd 3. Shared by kmcts-cuda-host and the CPU worker's forked hosts.
#include <cstring>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kmcts::worker {

inline constexpr int kHostRequestFd = 0;
inline constexpr int kHostReplyFd = 3;

/// Narrows what the host may do to other processes, before it loads its kernel: signals only to
/// itself (kill, tgkill, sigqueue; no tkill, no pidfds), no new processes (fork, vfork, clone
/// without CLONE_THREAD, clone3), and priorities, affinities, schedulers and limits only of
/// itself. Without it a candidate's host could stop or slow the reference's host while it is
/// timed (its uid and process namespace are the same), or hand work to a child that outlives
/// its calls. Applied to every thread the host has. Throws std::runtime_error.
void confine_kernel_host();

/// Landlock for a kernel host (worker/landlock.hpp), taken while it has one thread (the CPU host
/// right after its fork, kmcts-cuda-host first thing in main), so every thread it makes later is
/// held too. It reads only the system's folders (/usr, /lib, /lib64, /etc, /proc, /sys, /dev),
/// the folders of LD_LIBRARY_PATH, its bundle's lib folder and its `kernel`; it writes only into
/// existing files under /dev and its own /proc files. So a kernel cannot read the user's files
/// outside those folders (a project's .env) even under the user's own uid. A kernel without
/// Landlock leaves the host as it was; one that has it but refuses these rules throws
/// std::runtime_error (the worker then fails the evaluation, naming the host).
/// A HIP host (`hip`) also reads ROCm's folder ($ROCM_PATH, else /opt/rocm), and writes beneath
/// $KMCTS_TRACE_DIR/$KMCTS_TRACE_ROLE (its role: reference or candidate) where both are set:
/// rocprofv3's tool, inside the host, writes the host's trace there as it exits
/// (hardware/hip/rocprof_timing.hpp). Each host reaches only its own folder; what the candidate's
/// trace claims is held to the reference's and to the worker's own spans of its calls.
/// A host run under a profiler (`profiled`: Nsight Compute or compute-sanitizer, the profile
/// job) also reads /opt (where Nsight Compute lies) and reads and writes /tmp (the confined
/// worker's private one): the injected profiler keeps its lock and temporary files there
/// ("Failed to open/create lock file /tmp/nvidia/nsight_compute/lock" on the H100).
void confine_host_files(const std::string& kernel, bool hip = false, bool profiled = false);

/// The kernel's entry point `symbol` from the shared object at `path`, as a Fn. A kernel that
/// cannot be loaded or does not export it is the host's first reply, {"load_error": MESSAGE}
/// (`header` names where the symbol is declared), and the end of the host.
void* load_kernel_symbol(const std::string& path, const char* symbol, const char* header);
template <class Fn>
Fn load_kernel(const std::string& path, const char* symbol, const char* header) {
  void* address = load_kernel_symbol(path, symbol, header);
  Fn fn;
  static_assert(sizeof fn == sizeof address);
  std::memcpy(&fn, &address, sizeof fn);  // object-to-function pointer without a pedantic cast
  return fn;
}

/// The next request line; nullopt at the end of input (the worker is gone).
std::optional<std::string> next_request();
/// One reply line; a reply that cannot be written ends the host.
void send_reply(const nlohmann::json& reply);
/// send_reply, then ends the process at once (threads a kernel left behind die with it).
[[noreturn]] void send_reply_and_exit(const nlohmann::json& reply, int code);

}  // namespace kmcts::worker
