#!/usr/bin/env python3
"""Tables of the H200 validation (bench/measure/h200_validate.sh) from its JSON lines.

Usage: summarize_validation.py --aa NAME=FILE.jsonl ... --protocols PROBLEM:PROTOCOL=FILE.jsonl ...
       [--json OUT.json]
Prints markdown: A/A drift and false "faster" verdicts; per-candidate cost split and
run-to-run spread of the speedup for each measurement protocol."""
import argparse
import json
import statistics as st


def load(path):
    return [json.loads(line) for line in open(path) if line.strip()]


def aa_table(named):
    rows, out = [], {}
    for name, path in named:
        rs = [r for r in load(path) if r["verdict"] == "ok"]
        speedups = [r["speedup"] for r in rs]
        calls = [r["details"]["speedup_call"] for r in rs]
        medians = [r["reference"]["median_ns"] for r in rs] + [r["candidate"]["median_ns"] for r in rs]
        center = st.median(medians)
        drift = [abs(m / center - 1) for m in medians]
        s = {"pairs": len(rs), "faster": calls.count("faster"), "slower": calls.count("slower"),
             "same": calls.count("same"), "median_ns": center, "max_drift": max(drift),
             "drift_sd": st.pstdev([m / center - 1 for m in medians]), "speedup_min": min(speedups),
             "speedup_max": max(speedups), "ci_width_median": st.median(
                 [r["details"]["speedup_ci"]["high"] - r["details"]["speedup_ci"]["low"] for r in rs]),
             "run_seconds_median": st.median([r["run_seconds"] for r in rs]),
             "samples_median": st.median([len(r["candidate"]["samples_ns"]) for r in rs]),
             "dropped_low_clock": sum(r["details"]["counters"]["dropped_low_clock_candidate"] +
                                      r["details"]["counters"]["dropped_low_clock_reference"] for r in rs)}
        out[name] = s
        rows.append(f"| {name} | {s['median_ns'] / 1e3:.1f} us | {s['pairs']} | {s['faster']} ({100 * s['faster'] / s['pairs']:.0f}%) "
                    f"| {s['slower']} | {s['speedup_min']:.4f} - {s['speedup_max']:.4f} | {100 * s['drift_sd']:.3f}% "
                    f"| {100 * s['max_drift']:.3f}% | {s['ci_width_median']:.4f} | {s['samples_median']:.0f} "
                    f"| {s['dropped_low_clock']} | {s['run_seconds_median']:.2f} s |")
    print("| kernel | median | pairs | false 'faster' | 'slower' | speedup range | drift of the median (sd) "
          "| max drift | CI width (median) | samples per kernel | low-clock drops | wall per pair |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    return out


def protocol_table(named):
    rows, out = [], {}
    for key, path in named:
        problem, protocol = key.split(":")
        rs = [r for r in load(path) if r["verdict"] == "ok"]
        speedups = [r["speedup"] for r in rs]
        phases = [r["details"]["counters"].get("phases", {}) for r in rs]
        compile_s = max(r["build"]["seconds"] for r in rs)  # the one uncached build
        def phase(name):
            vals = [p.get(name, 0.0) for p in phases]
            return st.median(vals) / 1e3
        s = {"repeats": len(rs), "speedup_mean": st.mean(speedups),
             "speedup_spread": (max(speedups) - min(speedups)) / st.mean(speedups),
             "speedup_cv": st.pstdev(speedups) / st.mean(speedups), "compile_s": compile_s,
             "worker_s": st.median([r["run_seconds"] for r in rs]), "startup_s": phase("startup_ms"),
             "correctness_s": phase("correctness_ms"),
             "timing_s": phase("timing_ms") + phase("input_sets_ms") + phase("recheck_ms") + phase("events_ms")}
        out[key] = s
        rows.append(f"| {problem} | {protocol} | {s['repeats']} | {s['speedup_mean']:.4f} | {100 * s['speedup_cv']:.3f}% "
                    f"| {100 * s['speedup_spread']:.3f}% | {s['compile_s']:.2f} | {s['startup_s']:.2f} "
                    f"| {s['correctness_s']:.2f} | {s['timing_s']:.2f} | {s['worker_s']:.2f} |")
    print("| problem (seed vs reference) | protocol | runs | speedup (mean) | run-to-run CV | max - min | compile s "
          "| worker start s | correctness s | timing s (incl. checks) | GPU-seconds per candidate (worker wall) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aa", nargs="*", default=[])
    ap.add_argument("--protocols", nargs="*", default=[])
    ap.add_argument("--json")
    a = ap.parse_args()
    split = lambda items: [tuple(i.split("=", 1)) for i in items]
    result = {}
    if a.aa:
        result["aa"] = aa_table(split(a.aa))
        print()
    if a.protocols:
        result["protocols"] = protocol_table(split(a.protocols))
    if a.json:
        json.dump(result, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
