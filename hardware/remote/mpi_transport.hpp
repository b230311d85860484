#pragma once
// The MPI layer of `--mpi`, and the only code that calls MPI. MpiSession starts and ends MPI
// for the process; a Transport is used by one thread at a time (MPI_THREAD_SERIALIZED): it
// polls for a message without blocking, sizes it before receiving it (one over the limit is
// received into nothing and reported, never allocated), checks it (messages.hpp), and sends
// without blocking, keeping each payload until MPI is done with it.
#include <cstddef>
#include <list>
#include <optional>
#include <string>
#include <variant>

#include "hardware/remote/messages.hpp"

namespace kmcts::remote {

/// Whether this kmcts was built with MPI (`--mpi` is an error otherwise).
bool mpi_available();

class MpiSession {
 public:
  /// MPI_Init_thread. RunError when MPI is missing or cannot give MPI_THREAD_SERIALIZED.
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  int rank() const { return rank_; }
  /// After a rank was lost: MPI_Finalize waits for every rank, and a dead one never comes,
  /// so if it has not returned within `seconds` the process ends with `exit_code` (stdout and
  /// stderr flushed) without it. A lost rank that is alive (only slow) takes its stop and
  /// finalizes, and then so do we.
  void finalize_within(double seconds, int exit_code);
  int size() const { return size_; }

 private:
  int rank_ = 0, size_ = 1;
  bool finalized_ = false;
};

class Transport {
 public:
  explicit Transport(size_t max_bytes) : max_bytes_(max_bytes) {}
  ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  /// The next message from anyone, checked, or the error of a bad one (already consumed);
  /// nullopt when none is waiting.
  std::optional<std::variant<Message, MessageError>> poll();
  void send(int dest, Tag tag, const nlohmann::json& body);
  /// Sends that MPI has finished are forgotten; returns how many are still out.
  size_t progress();
  /// Forgets the sends to `rank` still out (a lost worker never receives them).
  void abandon_sends_to(int rank);
  size_t max_bytes() const { return max_bytes_; }

 private:
  struct Outgoing;
  size_t max_bytes_;
  std::list<Outgoing*> out_;
};

}  // namespace kmcts::remote
