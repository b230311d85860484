#pragma once
// Two-stage Ctrl-C (and SIGTERM) for the long commands: the first prints `note` on stderr and
// calls `stop` (which must be async-signal-safe: it sets a flag the work polls), so the work in
// flight finishes and what it recorded is kept; the second ends the process at once.

namespace kmcts::app {

/// `note` must outlive the process (a string literal).
void handle_interrupts(const char* note, void (*stop)());

/// From now on SIGTERM calls `action` (async-signal-safe) instead of the two stages above:
/// under `--mpi` a SIGTERM (mpirun ending the job, Slurm's time limit) suspends the runs at
/// once, resumable, rather than waiting on work that may never come back.
void on_sigterm(void (*action)());

}  // namespace kmcts::app
