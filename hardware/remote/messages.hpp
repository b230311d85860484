#pragma once
// What rank 0 and the worker ranks say to each other under `--mpi`: one JSON object per MPI
// message, its kind in the MPI tag. Every message is checked on arrival (size, JSON, the
// fields its kind needs); a bad one is a MessageError that names the sender and the fault,
// so a confused or hostile rank cannot take the run down or slip a result in.
//
//   worker -> 0: hello {version, host, pid, gpu_ids, gpus}     once, at start: the GPUs it sees
//                                                               (gpu_ids: their PCI bus ids)
//   0 -> worker: welcome {heartbeat_s, timeout_s, devices, slots}  its GPUs (rank 0 splits the
//                                                               GPUs that workers of a host share); go
//   0 -> worker: problem {key, name, entry, files, config}      once per problem and worker
//   0 -> worker: job {id, key, source}                          one evaluation
//   worker -> 0: result {id, result, device, busy_s}            its EvalResult (samples kept)
//   worker -> 0: heartbeat {}                                   at least every heartbeat_s
//   worker -> 0: failure {id, message}                          the job could not run there
//   0 -> worker: heartbeat {}                                   rank 0 is alive (a worker that
//                                                               hears nothing for timeout_s leaves)
//   0 -> worker: stop {}                                        finish and leave
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kmcts::remote {

enum class Tag : int { hello = 101, welcome, problem, job, result, heartbeat, failure, stop };

/// The tag's name, or "unknown" for a number that is no Tag.
const char* tag_name(int tag);

/// A message that breaks the rules above: its text names the rank, the tag and the fault.
struct MessageError : std::runtime_error {
  explicit MessageError(const std::string& what, int from = -1) : std::runtime_error(what), source(from) {}
  int source;  // the sender's rank, where known
};

struct Message {
  int source = -1;
  Tag tag = Tag::heartbeat;
  nlohmann::json body;
};

/// Checks one received payload: at most max_bytes, a JSON object nested at most 64 deep, the
/// fields `tag` needs with the right types, sizes (gpus, slots, device) at most 4096, busy_s
/// not negative. Throws MessageError.
Message decode(int source, int tag, std::string_view payload, size_t max_bytes);

/// The error for a payload that was too large to receive (its size known from the probe).
MessageError oversized(int source, int tag, size_t bytes, size_t max_bytes);

std::string encode(const nlohmann::json& body);

}  // namespace kmcts::remote
