"""What a KernelBench candidate's load_inline build costs (issue 25, item 4), on a machine with
torch and nvcc: each candidate is prebuilt as kmcts prebuilds it (prebuild.py, no GPU visible,
a fresh extension folder), under three setups:
  stock      torch's build as it is (CXX and PYTORCH_NVCC unset);
  fast-cold  kmcts's compiler wrappers (kb_cxx.py as CXX, kb_nvcc.py as PYTORCH_NVCC, as
             evaluator.kernelbench.fast_build sets them) with an empty precompiled-header folder:
             the first build of a campaign, which also makes the precompiled torch/extension.h;
  fast-warm  the wrappers with that header already made: every later build.
The candidates of one setup build at once (one process each, as the CPU pool does); fast-cold
builds the first candidate alone. A precompiled header serves one set of flags: a candidate
with extra_cflags of its own makes its own at its first build. Each row: wall seconds, CPU seconds of the build's
processes (os.wait4), and nvcc's phases (nvcc --time through NVCC_APPEND_FLAGS) where a CUDA
source was compiled.

Usage: python3 build_cost.py --harness SHARE/kmcts/kernelbench --arch 9.0 --work DIR --out rows.jsonl CANDIDATE.py ...
Not run in CI (it needs torch with CUDA); its results go to bench/results."""

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import time


def nvcc_phases(path):
    """{phase: ms} summed over the rows nvcc --time wrote (one file per build)."""
    phases = {}
    if not os.path.exists(path):
        return phases
    with open(path, newline="") as f:
        for row in csv.reader(f):
            if len(row) < 8 or row[6].strip() in ("metric", ""):
                continue
            name = row[1].strip()
            try:
                phases[name] = round(phases.get(name, 0.0) + float(row[6]), 1)
            except ValueError:
                continue
    return phases


def start(args, setup, candidate, index):
    name = os.path.splitext(os.path.basename(candidate))[0]
    label = f"{setup}-{index}-{name}"
    ext = os.path.join(args.work, "ext", label)
    shutil.rmtree(ext, ignore_errors=True)
    os.makedirs(ext)
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", TORCH_EXTENSIONS_DIR=ext, TORCH_CUDA_ARCH_LIST=args.arch,
               NVCC_APPEND_FLAGS=f"--time {os.path.join(args.work, label + '.nvcc.csv')}")
    env.pop("CXX", None)
    env.pop("PYTORCH_NVCC", None)
    if setup != "stock":
        env.update(CXX=os.path.join(args.harness, "kb_cxx.py"), KMCTS_REAL_CXX="c++",
                   KMCTS_PCH_DIR=os.path.join(args.work, "pch"), PYTORCH_NVCC=os.path.join(args.harness, "kb_nvcc.py"))
    log = open(os.path.join(args.work, label + ".log"), "w")
    proc = subprocess.Popen([sys.executable, os.path.join(args.harness, "prebuild.py"), candidate], env=env,
                            stdout=subprocess.PIPE, stderr=log, text=True)
    return {"setup": setup, "candidate": candidate, "label": label, "proc": proc, "t0": time.perf_counter(), "log": log}


def finish_all(args, runs):
    """Waits for the batch's processes in the order they end (each one's wall time is its own)."""
    left = {r["proc"].pid: r for r in runs}
    rows = []
    while left:
        pid, status, usage = os.wait4(-1, 0)
        run = left.pop(pid, None)
        if run is None:
            continue
        wall = time.perf_counter() - run["t0"]
        out = run["proc"].stdout.read().strip().splitlines()
        run["log"].close()
        answer = json.loads(out[-1]) if out else {"ok": False, "error": f"no answer (status {status})"}
        row = {"setup": run["setup"], "candidate": run["candidate"], "ok": answer.get("ok", False),
               "error": answer.get("error", "")[:300], "wall_s": round(wall, 2),
               "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
               "nvcc_phases_ms": nvcc_phases(os.path.join(args.work, run["label"] + ".nvcc.csv"))}
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--harness", required=True)
    p.add_argument("--arch", default="9.0")
    p.add_argument("--work", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--setups", default="stock,fast-cold,fast-warm")
    p.add_argument("candidates", nargs="+")
    args = p.parse_args()
    args.harness, args.work = os.path.abspath(args.harness), os.path.abspath(args.work)
    os.makedirs(args.work, exist_ok=True)
    shutil.rmtree(os.path.join(args.work, "pch"), ignore_errors=True)
    rows = []
    for setup in args.setups.split(","):
        batch = args.candidates
        if setup == "fast-cold":  # the first build alone, which makes the header
            batch = batch[:1]
        rows += finish_all(args, [start(args, setup, c, i) for i, c in enumerate(batch)])
    with open(args.out, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
