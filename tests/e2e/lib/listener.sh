# A listener on 127.0.0.1 for the hostile-candidate tests (sourced; not a test itself).
# start_listener DIR: listens on a free port, writes down whatever reaches it in DIR/received;
# sets listener (its pid, for the caller's trap) and port.
start_listener() {
  python3 - "$1/port" "$1/received" <<'PY' &
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(4)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
while True:
    c, _ = s.accept()
    with open(sys.argv[2], "ab") as f:
        f.write(c.recv(100) or b"(connected)")
    c.close()
PY
  listener=$!
  for _ in $(seq 1 50); do [ -s "$1/port" ] && break; sleep 0.1; done
  port=$(cat "$1/port")
}
