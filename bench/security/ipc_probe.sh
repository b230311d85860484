#!/usr/bin/env bash
# The grid of bench/security/ipc_probe.py on a GPU host, as root (issue 28): the parent alone
# (x), not dumpable (n), both under another uid (u, un); the child in its own network and mount
# namespaces (nsm), under another uid (uid), without capabilities (nocaps), with a private
# /dev/shm and /tmp (shm), in a process namespace (pid), and combinations. Needs util-linux's
# unshare and setpriv. One JSON line per run in $OUT/ipc.jsonl.
# Usage: OUT=DIR bash bench/security/ipc_probe.sh
set -uo pipefail
OUT=${OUT:-/tmp/kmcts-ipc}
mkdir -p "$OUT"
PY=$(command -v python3)
here=$(cd "$(dirname "$0")" && pwd)
w=$(mktemp -d)
mk() { printf '#!/bin/sh\nexec %s "$@"\n' "$1" > "$w/$2.sh"; chmod +x "$w/$2.sh"; }
mk "unshare -n -m $PY" nsm
mk "setpriv --reuid 3000200 --regid 3000200 --clear-groups $PY" uid
mk "unshare -n -m setpriv --reuid 3000200 --regid 3000200 --clear-groups $PY" nsm_uid
mk "setpriv --inh-caps=-all --bounding-set=-all $PY" nocaps
mk "unshare -n -m setpriv --inh-caps=-all --bounding-set=-all $PY" nsm_nocaps
mk "unshare -n -m -p -f --mount-proc setpriv --inh-caps=-all --bounding-set=-all $PY" pid
mk "unshare -n -m sh -c 'mount -t tmpfs tmpfs /dev/shm && mount -t tmpfs tmpfs /tmp && exec setpriv --inh-caps=-all --bounding-set=-all $PY \"\$@\"' sh" shm
{
  for m in x xn u un; do timeout 90 "$PY" "$here/ipc_probe.py" "$m"; done
  for v in nsm uid nsm_uid nocaps nsm_nocaps pid shm; do
    for m in w nw; do WRAP="$w/$v.sh" WRAP_DESC=$v timeout 90 "$PY" "$here/ipc_probe.py" "$m"; done
  done
} > "$OUT/ipc.jsonl" 2> "$OUT/ipc.err"
rm -rf "$w"
cat "$OUT/ipc.jsonl"
