# The mock LLM server of the whole-command tests (sourced; not a test itself).
# start_mock LOG ARGS...: starts `$kmcts mock-llm --port 0 ARGS...` with its output in LOG, waits
# until it listens; sets server (its pid, for the caller's trap) and port. Calls the caller's
# fail() when it does not start.
start_mock() {
  local log=$1
  shift
  "$kmcts" mock-llm --port 0 "$@" >"$log" 2>&1 &
  server=$!
  for _ in $(seq 1 50); do grep -q listening "$log" 2>/dev/null && break; sleep 0.1; done
  port=$(grep -o "127.0.0.1:[0-9]*" "$log" | cut -d: -f2)
  [ -n "$port" ] || fail "the mock server did not start: $(cat "$log")"
}
