"""Checks kb_nvcc.py's split (kb_split.py) on a GPU machine with torch and nvcc: every CUDA source of
tests/fixtures/kernelbench/split is built with load_inline through kmcts's compiler wrappers, split
(KMCTS_SPLIT_CUDA=1, the default) and, where asked, whole (KMCTS_SPLIT_CUDA=0: nvcc compiles the
source as written), each build in a fresh process and extension folder; each build's `run` is
called on seeded inputs of every dtype its `// dtypes:` line names and compared with its
`// reference:` expression, and the split and whole builds' outputs with each other (bit for
bit). A row also says whether the build was split (its host unit's object is there) and
whether that is what the source's `// expect:` line says.

Usage: python3 split_check.py --harness SHARE/kmcts/kernelbench --work DIR --out rows.jsonl [--whole relu_plain,...]
Not run in CI (it needs torch with CUDA); its results go to bench/results/kernelbench-builds.md."""

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "fixtures", "kernelbench",
                        "split")

CHILD = r"""
import hashlib, json, os, sys, time
import torch
from torch.utils.cpp_extension import load_inline
source, name, reference, dtypes = sys.argv[1:5]
with open(source) as f:
    cuda = f.read()
t0 = time.perf_counter()
ext = load_inline(name=name, cpp_sources="torch::Tensor run(torch::Tensor x);", cuda_sources=cuda,
                  functions=["run"], verbose=False)
build_s = time.perf_counter() - t0
out = {"build_s": round(build_s, 2), "dtypes": {}}
for dtype in dtypes.split():
    torch.manual_seed(0)
    x = torch.randn(64, 1000, device="cuda").to(getattr(torch, dtype))
    y = ext.run(x)
    torch.cuda.synchronize()
    want = eval(reference, {"torch": torch, "x": x})
    err = (y.double() - want.double()).abs().max().item()
    out["dtypes"][dtype] = {"max_abs_err": err, "ok": bool(torch.allclose(y.double(), want.double(), atol=1e-3, rtol=1e-3)),
                            "sha256": hashlib.sha256(y.cpu().contiguous().numpy().tobytes()).hexdigest()[:16]}
print(json.dumps(out))
"""


def header(text, key, default=""):
    m = re.search(rf"^//\s*{key}:\s*(.*)$", text, re.M)
    return m.group(1).strip() if m else default


def build(args, source, mode):
    stem = os.path.splitext(os.path.basename(source))[0]
    ext = os.path.join(args.work, "ext", f"{mode}-{stem}")
    shutil.rmtree(ext, ignore_errors=True)
    os.makedirs(ext)
    env = dict(os.environ, TORCH_EXTENSIONS_DIR=ext, TORCH_CUDA_ARCH_LIST=args.arch,
               CXX=os.path.join(args.harness, "kb_cxx.py"), KMCTS_REAL_CXX="c++",
               KMCTS_PCH_DIR=os.path.join(args.work, "pch"), PYTORCH_NVCC=os.path.join(args.harness, "kb_nvcc.py"),
               KMCTS_SPLIT_CUDA="0" if mode == "whole" else "1")
    with open(source) as f:
        text = f.read()
    t0 = time.perf_counter()
    run = subprocess.run([sys.executable, "-c", CHILD, source, f"kmcts_split_{mode}_{stem}", header(text, "reference"),
                          header(text, "dtypes", "float32")], env=env, capture_output=True, text=True, check=False)
    row = {"fixture": stem, "mode": mode, "expect": header(text, "expect"), "rc": run.returncode,
           "process_s": round(time.perf_counter() - t0, 2),
           "split": bool(glob.glob(os.path.join(ext, "**", "*.kmcts-host.o"), recursive=True))}
    if run.returncode == 0:
        row.update(json.loads(run.stdout.strip().splitlines()[-1]))
    else:
        row["error"] = (run.stderr or run.stdout)[-3000:]
    notes = [line for line in run.stderr.splitlines() if line.startswith(("kb_nvcc:", "kb_cxx:"))]
    if notes:
        row["notes"] = notes[:4]
    row["as_expected"] = row["split"] == (row["expect"].startswith("split") and mode != "whole")
    return row


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--harness", required=True, help="the installed harness folder (kb_nvcc.py, kb_cxx.py)")
    p.add_argument("--work", required=True, help="extension folders and precompiled headers go here")
    p.add_argument("--out", required=True, help="one JSON line per build")
    p.add_argument("--arch", default="9.0", help="TORCH_CUDA_ARCH_LIST")
    p.add_argument("--whole", default="", help="fixtures also built whole, for the outputs and the time")
    p.add_argument("--only", default="", help="fixtures to build (default: all)")
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    sources = sorted(glob.glob(os.path.join(FIXTURES, "*.cu")))
    if args.only:
        sources = [s for s in sources if os.path.splitext(os.path.basename(s))[0] in args.only.split(",")]
    rows = []
    with open(args.out, "w") as out:
        # The first build makes the precompiled headers (the binding's and the host unit's): the
        # campaign's first candidate pays it once; the rows after it are every later build.
        first = build(args, os.path.join(FIXTURES, "relu_plain.cu"), "cold")
        out.write(json.dumps(first) + "\n")
        print(f"cold build (makes the precompiled headers): {first.get('build_s')} s rc={first['rc']}", flush=True)
        for source in sources:
            stem = os.path.splitext(os.path.basename(source))[0]
            for mode in ["split"] + (["whole"] if stem in args.whole.split(",") else []):
                row = build(args, source, mode)
                rows.append(row)
                out.write(json.dumps(row) + "\n")
                out.flush()
                print(f"{stem:20s} {mode:5s} rc={row['rc']} split={row['split']} expected={row['as_expected']} "
                      f"build={row.get('build_s')} s {json.dumps(row.get('dtypes', {}))}", flush=True)
    for stem in {r["fixture"] for r in rows}:
        pair = [r for r in rows if r["fixture"] == stem and r["rc"] == 0]
        if len(pair) == 2:
            same = all(pair[0]["dtypes"][d]["sha256"] == pair[1]["dtypes"][d]["sha256"] for d in pair[0]["dtypes"])
            print(f"{stem}: split and whole outputs {'identical' if same else 'DIFFER'}")


if __name__ == "__main__":
    main()
