#include "hardware/remote/mpi_transport.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"

#ifdef KMCTS_HAVE_MPI
#include <mpi.h>
#endif

namespace kmcts::remote {

#ifdef KMCTS_HAVE_MPI

struct Transport::Outgoing {
  int dest;
  std::string payload;
  MPI_Request request;
};

bool mpi_available() { return true; }

MpiSession::MpiSession(int* argc, char*** argv) {
  int provided = 0;
  if (MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
    throw RunError("--mpi: MPI_Init_thread failed");
  if (provided < MPI_THREAD_SERIALIZED) {
    MPI_Finalize();
    throw RunError("--mpi: this MPI library does not offer MPI_THREAD_SERIALIZED");
  }
  // Errors come back as codes (a lost rank, a truncated message) instead of aborting the job.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiSession::~MpiSession() {
  if (!finalized_) MPI_Finalize();
}

void MpiSession::finalize_within(double seconds, int exit_code) {
  std::fflush(stdout);
  std::fflush(stderr);
  std::thread([seconds, exit_code] {
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(exit_code);
  }).detach();
  MPI_Finalize();
  finalized_ = true;
}

namespace {
// Sends given up on (to a lost rank, or still out at the end): MPI may still read their
// payloads, so they stay allocated (and reachable) until the process ends.
std::vector<void*>& kept_sends() {
  static std::vector<void*> kept;
  return kept;
}
}  // namespace

Transport::~Transport() {
  for (Outgoing* o : out_) {
    if (o->request != MPI_REQUEST_NULL) MPI_Request_free(&o->request);
    kept_sends().push_back(o);
  }
}

std::optional<std::variant<Message, MessageError>> Transport::poll() {
  int flag = 0;
  MPI_Message handle;
  MPI_Status status;
  if (int rc = MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &handle, &status); rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING] = {};
    int length = 0;
    MPI_Error_string(rc, text, &length);
    return MessageError(fmt::format("MPI_Improbe failed: {}", text));
  }
  if (!flag) return std::nullopt;
  int count = 0;
  MPI_Get_count(&status, MPI_CHAR, &count);
  const int source = status.MPI_SOURCE, tag = status.MPI_TAG;
  // An oversized message is received whole and dropped unread: a truncated receive (into a
  // smaller buffer) crashed the sender in Open MPI 4.1's shared-memory transport.
  std::string payload(static_cast<size_t>(std::max(count, 0)), '\0');
  if (MPI_Mrecv(payload.data(), count, MPI_CHAR, &handle, MPI_STATUS_IGNORE) != MPI_SUCCESS)
    return MessageError(fmt::format("MPI message from rank {} (tag {}) could not be received", source, tag));
  if (payload.size() > max_bytes_) return oversized(source, tag, payload.size(), max_bytes_);
  try {
    return decode(source, tag, payload, max_bytes_);
  } catch (const MessageError& e) {
    return e;
  }
}

void Transport::send(int dest, Tag tag, const nlohmann::json& body) {
  auto* o = new Outgoing{dest, encode(body), MPI_REQUEST_NULL};
  if (o->payload.size() > max_bytes_) {
    std::string what = fmt::format("a '{}' message of {} bytes to rank {} is over --mpi-max-message-mb", tag_name(static_cast<int>(tag)),
                                   o->payload.size(), dest);
    delete o;
    throw std::runtime_error(what);
  }
  if (MPI_Isend(o->payload.data(), static_cast<int>(o->payload.size()), MPI_CHAR, dest, static_cast<int>(tag),
                MPI_COMM_WORLD, &o->request) != MPI_SUCCESS) {
    delete o;
    throw std::runtime_error(fmt::format("MPI_Isend to rank {} failed", dest));
  }
  out_.push_back(o);
}

size_t Transport::progress() {
  for (auto it = out_.begin(); it != out_.end();) {
    int done = 0;
    if (MPI_Test(&(*it)->request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || done) {
      delete *it;
      it = out_.erase(it);
    } else {
      ++it;
    }
  }
  return out_.size();
}

void Transport::abandon_sends_to(int rank) {
  for (auto it = out_.begin(); it != out_.end();) {
    if ((*it)->dest == rank) {
      MPI_Request_free(&(*it)->request);
      kept_sends().push_back(*it);
      it = out_.erase(it);
    } else {
      ++it;
    }
  }
}

#else  // built without MPI: --mpi is refused before any of this is used

struct Transport::Outgoing {};
bool mpi_available() { return false; }
MpiSession::MpiSession(int*, char***) { throw InputError("--mpi: this kmcts was built without MPI (install libopenmpi-dev)"); }
MpiSession::~MpiSession() = default;
void MpiSession::finalize_within(double, int) {}
Transport::~Transport() = default;
std::optional<std::variant<Message, MessageError>> Transport::poll() { return std::nullopt; }
void Transport::send(int, Tag, const nlohmann::json&) {}
size_t Transport::progress() { return 0; }
void Transport::abandon_sends_to(int) {}

#endif

}  // namespace kmcts::remote
