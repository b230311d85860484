#pragma once
// Many searches on a few worker threads, stopped as one: the loop that `kmcts kernelbench`
// (one worker per GPU) and `kmcts ablate` (--jobs workers) share.
#include <cstddef>
#include <functional>

namespace kmcts {

/// Runs task(index, worker) for every index in [0, count) on `workers` threads (worker =
/// 0 .. workers-1), each thread taking the next index until none is left or a stop is
/// requested. An InputError thrown by a task stops the pool (tasks in flight finish) and is
/// rethrown once every thread is back; tasks handle other exceptions themselves. A stop
/// requested earlier is forgotten when the pool starts.
void run_pool(size_t count, size_t workers, const std::function<void(size_t index, size_t worker)>& task);

/// Asks the running pool to stop: no task starts, and searches in flight finish their work
/// in flight (Coordinator::request_stop, repeated until the pool returns, since a search that
/// starts just after the request would clear it). Async-signal-safe.
void request_pool_stop();

/// Whether a stop was requested since the pool started.
bool pool_stop_requested();

}  // namespace kmcts
