// A misbehaving MPI rank for tests/e2e/mpi.sh, launched beside kmcts (mpirun ... : -np 1
// kmcts-mpi-rogue VERSION): it sends rank 0 what a broken or hostile worker might, then a
// proper hello, then nonsense after its welcome, and then falls silent while holding jobs.
// Rank 0 must reject each message with an error naming rank and fault, lose the silent rank
// by its heartbeat timeout, and finish the run on the other workers.
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace {

void send(const std::string& payload, int tag) {
  MPI_Send(payload.data(), static_cast<int>(payload.size()), MPI_CHAR, 0, tag, MPI_COMM_WORLD);
}

// Blocks until rank 0 sends `tag`; other messages (jobs) are swallowed.
void wait_for(int tag) {
  while (true) {
    MPI_Status status;
    MPI_Probe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
    int count = 0;
    MPI_Get_count(&status, MPI_CHAR, &count);
    std::string buffer(static_cast<size_t>(count), '\0');
    MPI_Recv(buffer.data(), count, MPI_CHAR, 0, status.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (status.MPI_TAG == tag) return;
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const std::string version = argc > 1 ? argv[1] : "?";
  const int hello = 101, welcome = 102, result = 105, stop = 108;
  send("this is not JSON {", hello);
  send(R"({"version": 5, "host": "rogue", "pid": 1, "gpu_ids": "", "gpus": 0})", hello);
  send(std::string(2u << 20, 'x'), result);  // over --mpi-max-message-mb 1
  send("{}", 999);
  send(R"({"version": ")" + version + R"(", "host": "rogue", "pid": )" + std::to_string(getpid()) +
           R"(, "gpu_ids": "", "gpus": 0})",
       hello);
  wait_for(welcome);
  send(R"({"id": 424242, "result": {}, "device": 0, "busy_s": 0.1})", result);
  send(R"({"id": 1, "result": "not an object", "device": 0, "busy_s": 0.1})", result);
  wait_for(stop);  // silent from here: rank 0 must lose this rank and requeue its jobs
  MPI_Finalize();
  return 0;
}
