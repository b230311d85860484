#!/usr/bin/env python3
"""Where a search's evaluations go (issue 29, item 1), from the run directories that
`kmcts-bench-search-quality --keep-runs DIR` keeps (DIR/LANDSCAPE/STRATEGY/seedN/run.sqlite).

For every selection of a node to expand it notes, from the run's event log: the node's measured
speedup against the incumbent's (the best measured so far), whether it is the incumbent, its
depth against the incumbent's, how many children it had already; and for every evaluation,
whether it improved the incumbent and what kind of node it came from. Counted up to the
evaluation that first came within the tolerance of the landscape's best (the search-quality
figure), or to the budget when it never did.

Usage: study.py DIR [--sq SQ.json] [--markdown OUT.md]
   SQ.json (the bench's --out) gives each landscape's best per seed; without it the run's own
   best stands in (then "reached" means: reached its own final best)."""

import argparse
import glob
import json
import os
import sqlite3
import statistics
from collections import Counter, defaultdict


def run_events(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = db.execute("SELECT kind, payload FROM events ORDER BY seq").fetchall()
    db.close()
    return [(k, json.loads(p)) for k, p in rows]


def study_run(events, best, tolerance):
    speed, depth, children = {}, {0: 0}, Counter()
    incumbent, inc_speed = None, 0.0
    out = Counter()
    depth_gaps, depths = [], []
    evaluations = 0
    pending_select = {}
    for kind, p in events:
        if kind == "select" and p.get("kind") == "expand":
            n = p["node"]
            depth.setdefault(n, len(p.get("path", [n])) - 1)
            out["expand_selects"] += 1
            s = speed.get(n)
            ratio = (s / inc_speed) if (s is not None and inc_speed > 0) else 0.0
            depths.append(depth.get(n, 0))
            if incumbent is not None:
                depth_gaps.append(depth.get(n, 0) - depth.get(incumbent, 0))
            out["at_incumbent"] += n == incumbent
            out["near"] += ratio >= 0.98
            out["far"] += ratio < 0.8
            out["already_expanded"] += children[n] > 0
            out["wide"] += children[n] >= 3
            pending_select[p.get("trial")] = ("incumbent" if n == incumbent else "near" if ratio >= 0.98 else
                                              "far" if ratio < 0.8 else "mid")
        elif kind == "select" and p.get("kind") == "debug":
            out["debug_selects"] += 1
        elif kind == "child":
            parent, child = p["parent"], p["child"]
            if p.get("kind") == "expand":
                children[parent] += 1
            depth.setdefault(child, depth.get(parent, 0) + 1)
            if not p.get("new_node", True):
                out["transpositions"] += 1
        elif kind == "agent_failed":
            out["agent_failed"] += 1
        elif kind == "evaluation":
            evaluations += 1
            n = p["node"]
            ok = p.get("verdict") == "ok"
            out["failed"] += not ok
            if ok:
                speed[n] = p.get("speedup", 0.0)
                if speed[n] > inc_speed:
                    origin = pending_select.get(p.get("trial"), "seed/debug")
                    if incumbent is not None:
                        out["improvements"] += 1
                        out["improved_from_" + origin] += 1
                    incumbent, inc_speed = n, speed[n]
            if ok and speed[n] >= (1 - tolerance) * best * (1 - 1e-12):
                out["reached_at"] = evaluations
                break
    out["evaluations"] = evaluations
    return out, depth_gaps, depths


def pct(a, b):
    return f"{100 * a / b:.0f}%" if b else "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--sq")
    ap.add_argument("--tolerance", type=float, default=0.02)
    ap.add_argument("--markdown")
    args = ap.parse_args()
    sq = json.load(open(args.sq)) if args.sq else None
    lines = ["| landscape | strategy | evals | expand selects | at incumbent | near (>=98%) | far (<80%) | "
             "parent already expanded | >=3 children | median depth - incumbent's | failed | transpositions | "
             "improvements from incumbent / near / mid / far |", "|" + "---|" * 13]
    depth_lines = []
    for land_dir in sorted(glob.glob(os.path.join(args.dir, "*"))):
        land = os.path.basename(land_dir)
        for strat_dir in sorted(glob.glob(os.path.join(land_dir, "*"))):
            strat = os.path.basename(strat_dir)
            total, gaps, per_depth = Counter(), [], defaultdict(int)
            for seed_dir in sorted(glob.glob(os.path.join(strat_dir, "seed*"))):
                seed = int(os.path.basename(seed_dir)[4:])
                events = run_events(os.path.join(seed_dir, "run.sqlite"))
                best = sq["landscapes"][land]["best_speedup"][seed] if sq and land in sq["landscapes"] else None
                if best is None:
                    best = max((p.get("speedup", 0) for k, p in events if k == "evaluation" and p.get("verdict") == "ok"),
                               default=1.0)
                c, dg, depths = study_run(events, best, args.tolerance)
                total.update(c)
                gaps += dg
                for d in depths:
                    per_depth[min(d // 4, 5)] += 1
            e = total["expand_selects"]
            lines.append(
                f"| {land} | {strat} | {total['evaluations']} | {e} | {pct(total['at_incumbent'], e)} | "
                f"{pct(total['near'], e)} | {pct(total['far'], e)} | {pct(total['already_expanded'], e)} | "
                f"{pct(total['wide'], e)} | {statistics.median(gaps) if gaps else '-'} | "
                f"{pct(total['failed'], total['evaluations'])} | {total['transpositions']} | "
                f"{total['improved_from_incumbent']} / {total['improved_from_near']} / {total['improved_from_mid']} / "
                f"{total['improved_from_far']} |")
            n = sum(per_depth.values())
            depth_lines.append(f"| {land} | {strat} | " + " | ".join(pct(per_depth[b], n) for b in range(6)) + " |")
    text = ("\n".join(lines) + "\n\nExpansions by the depth of the expanded node (up to the reach, all seeds):\n\n"
            "| landscape | strategy | 0-3 | 4-7 | 8-11 | 12-15 | 16-19 | 20+ |\n|---|---|---|---|---|---|---|---|\n"
            + "\n".join(depth_lines) + "\n")
    print(text)
    if args.markdown:
        open(args.markdown, "w").write(text)


if __name__ == "__main__":
    main()
