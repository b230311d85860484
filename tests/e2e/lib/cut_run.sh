# Helpers of the resume tests (sourced; not a test itself).
# cut_run SRC DST SEQ: DST becomes run SRC as a kill right after event SEQ would have left it
# (what the store held then: events, evaluations, edges and nodes up to SEQ; status running).
# Only the end of a store batch is a point a kill can leave (a batch commits whole), so SEQ
# should be one of batch_ends.
cut_run() {
  rm -rf "$2" && cp -r "$1" "$2" && rm -f "$2/summary.json" "$2/lock" &&
    sqlite3 "$2/run.sqlite" "delete from events where seq > $3; delete from evaluations where seq > $3;
      delete from edges where seq > $3; delete from nodes where created_seq > $3;
      update run set status = 'running', ended_at = null, summary = null;"
}
# batch_ends RUN: the sequence numbers at which a deterministic run's store batches end: where
# the log turns from selections to agent outcomes, from those to evaluations, and back.
batch_ends() {
  sqlite3 "$1/run.sqlite" "select seq, kind from events order by seq" | python3 -c '
import sys
group = {"select": "s", "child": "a", "agent_failed": "a", "evaluation": "e", "node": "n"}
rows = [line.strip().split("|") for line in sys.stdin]
print(" ".join(rows[i][0] for i in range(len(rows) - 1) if group.get(rows[i][1]) != group.get(rows[i + 1][1])))'
}
# event_signature RUN: the run's event log as what the search did (resumes and ends, wall times
# and how LLM replies were fetched aside), one line per event, for comparing two runs.
event_signature() {
  python3 - "$1/run.sqlite" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for kind, payload in db.execute("select kind, payload from events where kind not in ('resumed', 'finished') order by seq"):
    d = json.loads(payload)
    d.pop("agent_seconds", None)
    for call in d.get("llm_calls") or []:
        for key in ("seconds", "attempts", "errors", "cassette"):
            call.pop(key, None)
    if isinstance(d.get("usage"), dict):
        d["usage"].pop("retries", None)
    print(kind, json.dumps(d, sort_keys=True))
PY
}
