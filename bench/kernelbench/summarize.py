"""Tables from bench/kernelbench/h200_kernelbench.sh's results: the cheat corpus under the
hardened harness, and per campaign (kmcts kernelbench) every evaluation with its verdict and
where its seconds went (build on the CPU pool; load, correctness and timing holding the GPU).

Usage: python3 summarize.py [--cheats cheats.jsonl] [--campaign LABEL=OUT_DIR ...]"""

import argparse
import glob
import json
import os
import sqlite3
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "hardware", "kernelbench",
                                "harness"))
from kb_metrics import harness_verdict as verdict  # noqa: E402


def reason(r):
    text = r.get("rejected") or r.get("wrong_answer") or r.get("error") or ""
    if not text:
        text = "; ".join(t.get("error", "") for t in r.get("trials", []) if not t.get("ok"))
    return text.replace("|", "/")[:90]


def cheats_table(path):
    print("| candidate | verdict | reason | seconds (process) |\n|---|---|---|---|")
    for line in open(path):
        r = json.loads(line)
        print(f"| {os.path.basename(r['file'])} | {verdict(r)} | {reason(r)} | {r.get('process_seconds', '')} |")


def campaign_table(label, out):
    print(f"\n{label} ({out}):\n")
    print("| problem | submission | verdict | speedup vs eager | vs compile | build s (CPU) | GPU s | start | load | "
          "correctness | timing (redraw / candidate / checks / references / compile) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    total = {"evaluations": 0, "gpu_s": 0.0}
    for db in sorted(glob.glob(os.path.join(out, "runs", "*", "run.sqlite"))):
        problem = os.path.basename(os.path.dirname(db))
        c = sqlite3.connect(db)
        rows = c.execute("select e.verdict, e.compile_seconds, e.run_seconds, e.details, n.meta from evaluations e "
                         "join nodes n on n.id = e.node order by e.seq")
        for v, build, run, details, meta in rows:
            d = json.loads(details or "{}")
            sub = os.path.basename(json.loads(meta or "{}").get("submission", "")) or "seed"
            sp = d.get("speedup") or {}
            sec = d.get("seconds") or {}
            fmt = lambda x: f"{x:.3f}" if isinstance(x, (int, float)) else "-"
            fs = lambda x: f"{x:.1f}" if isinstance(x, (int, float)) else "-"
            phases = " / ".join(fs(sec.get(f"timing_{k}")) for k in ("redraw", "candidate", "checks", "references",
                                                                     "compile"))
            timing = f"{fs(sec.get('timing'))} ({phases})" if "timing_redraw" in sec else fs(sec.get("timing"))
            print(f"| {problem} | {sub} | {v} | {fmt(sp.get('eager'))} | {fmt(sp.get('compile'))} | {fs(build)} | "
                  f"{fs(run)} | {fs(sec.get('start'))} | {fs(sec.get('load'))} | {fs(sec.get('correctness'))} | {timing} |")
            total["evaluations"] += 1
            total["gpu_s"] += run or 0.0
    if total["evaluations"]:
        print(f"\n{total['evaluations']} evaluations, {total['gpu_s']:.1f} GPU-held seconds "
              f"({total['gpu_s'] / total['evaluations']:.1f} per evaluation)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cheats")
    parser.add_argument("--campaign", nargs="*", default=[])
    a = parser.parse_args()
    if a.cheats:
        cheats_table(a.cheats)
    for item in a.campaign:
        label, out = item.split("=", 1)
        campaign_table(label, out)


if __name__ == "__main__":
    main()
