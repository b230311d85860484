"""Upstream KernelBench's own evaluation against kmcts's faithful mode on the same candidates
(issue 25, item 3), on a GPU machine with torch. For each (problem, candidate, backend) line of
PAIRS it runs upstream's eval_kernel_against_ref from a checkout (KB_SRC, its src/ folder: the
function as it is, with stand-ins only for the imports it does not need here: requests, dotenv,
tqdm, openai, litellm, and pydantic's BaseModel where those are missing) in a process of its own, then kmcts's
faithful.py on the same pair, and prints one JSON line per pair: both verdicts, both speedups
(reference mean over candidate mean, CUDA events) and whether they agree (verdicts equal,
speedups within 3%).

Usage: python3 upstream_compare.py --kb-src KB/src --harness SHARE/kmcts/kernelbench --pairs PAIRS
         [--trials 100] [--out rows.jsonl]
PAIRS: one "PROBLEM.py CANDIDATE.py [cuda|triton]" per line (# comments allowed).
Not run in CI (it needs a GPU); its results go to bench/results."""

import argparse
import concurrent.futures
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time

STANDINS = {
    "requests": "",
    "openai": "class OpenAI:\n    def __init__(self, *args, **kwargs):\n        raise RuntimeError('no LLM calls here')\n",
    "litellm": "def completion(*args, **kwargs):\n    raise RuntimeError('no LLM calls here')\n",
    "dotenv": "def load_dotenv(*args, **kwargs):\n    return False\n",
    "tqdm": "def tqdm(iterable=None, *args, **kwargs):\n    return iterable\n",
    "pydantic": (
        "class BaseModel:\n"
        "    def __init__(self, **kwargs):\n"
        "        import copy\n"
        "        for klass in reversed(type(self).__mro__):\n"
        "            for name in getattr(klass, '__annotations__', {}):\n"
        "                if hasattr(klass, name):\n"
        "                    setattr(self, name, copy.deepcopy(getattr(klass, name)))\n"
        "        for name, value in kwargs.items():\n"
        "            setattr(self, name, value)\n"
        "    def model_dump(self):\n"
        "        return dict(self.__dict__)\n"
        "    dict = model_dump\n"),
}

UPSTREAM = r'''
import json, sys
sys.path.insert(0, sys.argv[1])
from kernelbench.eval import eval_kernel_against_ref
ref, cand, backend, trials = open(sys.argv[2]).read(), open(sys.argv[3]).read(), sys.argv[4], int(sys.argv[5])
build = sys.argv[6]  # the candidate's own extension folder, shared with our harness's run
r = eval_kernel_against_ref(ref, cand, seed_num=42, num_correct_trials=5, num_perf_trials=trials,
                            measure_performance=trials > 1, timing_method="cuda_event", build_dir=build, device=0,
                            backend=backend)
out = {"compiled": bool(r.compiled), "correct": bool(r.correctness), "runtime_us": r.runtime, "ref_runtime_us": r.ref_runtime,
       "metadata": {k: str(v)[:300] for k, v in (r.metadata or {}).items()}}
if r.correctness and r.runtime and r.runtime > 0 and r.ref_runtime and r.ref_runtime > 0:
    out["speedup"] = r.ref_runtime / r.runtime
print("UPSTREAM " + json.dumps(out))
'''


def standins_dir():
    """A folder of stand-in modules for the imports upstream's eval does not need here."""
    folder = tempfile.mkdtemp(prefix="kb-standins-")
    for name, text in STANDINS.items():
        try:
            __import__(name)
        except ImportError:
            with open(os.path.join(folder, name + ".py"), "w", encoding="utf-8") as f:
                f.write(text)
    return folder


def verdict(compiled, correct):
    return "ok" if correct else ("wrong_answer" if compiled else "compile_error")


def build_dir(args, candidate):
    """One extension folder per candidate, for both evaluations: the same sources and flags
    make the same extension, so the timed pass builds nothing (builds are not what is compared)."""
    digest = hashlib.sha256(open(candidate, "rb").read()).hexdigest()[:16]
    folder = os.path.join(args.build_root, digest)
    os.makedirs(folder, exist_ok=True)
    return folder


def run_upstream(args, problem, candidate, backend, standins, trials=None):
    env = dict(os.environ, PYTHONPATH=standins + os.pathsep + os.environ.get("PYTHONPATH", ""))
    trials = args.trials if trials is None else trials
    proc = subprocess.run([sys.executable, "-c", UPSTREAM, args.kb_src, problem, candidate, backend, str(trials),
                           build_dir(args, candidate)],
                          capture_output=True, text=True, env=env, timeout=1800, check=False)
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("UPSTREAM "):
            return json.loads(line[len("UPSTREAM "):])
    return {"error": (proc.stderr or proc.stdout)[-1500:]}


def run_ours(args, problem, candidate):
    proc = subprocess.run([sys.executable, os.path.join(args.harness, "faithful.py"), "--problem", problem, "--candidate",
                           candidate, "--device", "0", "--trials", str(args.trials), "--no-compile"],
                          capture_output=True, text=True, timeout=1800, check=False,
                          env=dict(os.environ, TORCH_EXTENSIONS_DIR=build_dir(args, candidate)))
    try:
        return json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        return {"error": (proc.stderr or proc.stdout)[-1500:]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kb-src", required=True)
    parser.add_argument("--harness", required=True)
    parser.add_argument("--pairs", required=True)
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--out", default="")
    parser.add_argument("--build-root", default=os.path.join(tempfile.gettempdir(), "kb-upstream-builds"))
    parser.add_argument("--prebuild-jobs", type=int, default=8,
                        help="candidates built (and checked once, untimed) at once before the timed pass")
    args = parser.parse_args()
    standins = standins_dir()
    out = open(args.out, "w", encoding="utf-8") if args.out else sys.stdout
    pairs = []
    for line in open(args.pairs, encoding="utf-8"):
        fields = line.split("#", 1)[0].split()
        if fields:
            pairs.append((fields[0], fields[1], fields[2] if len(fields) > 2 else "cuda"))
    started = time.time()
    # Only extensions need building ahead (Triton compiles at the first call, which both
    # evaluations make before they time anything).
    builds = [p for p in pairs if "load_inline" in open(p[1], encoding="utf-8").read()]
    with concurrent.futures.ThreadPoolExecutor(max(1, args.prebuild_jobs)) as pool:
        list(pool.map(lambda p: run_upstream(args, *p, standins, trials=1), builds))
    print(f"prebuilt {len(builds)} candidates in {time.time() - started:.0f} s", file=sys.stderr, flush=True)
    for problem, candidate, backend in pairs:
        up = run_upstream(args, problem, candidate, backend, standins)
        ours = run_ours(args, problem, candidate)
        row = {"problem": problem, "candidate": candidate, "backend": backend, "upstream": up,
               "ours": {k: ours.get(k) for k in ("compiled", "correct", "speedup", "error", "runtime_ms")}}
        v_up = verdict(up.get("compiled", False), up.get("correct", False)) if "error" not in up else "error"
        v_ours = verdict(ours.get("compiled", False), ours.get("correct", False)) if "error" not in ours else "error"
        row["verdicts"] = [v_up, v_ours]
        s_up, s_ours = up.get("speedup"), (ours.get("speedup") or {}).get("eager")
        row["speedup_ratio"] = s_ours / s_up if s_up and s_ours else None
        row["agree"] = v_up == v_ours and (row["speedup_ratio"] is None or abs(row["speedup_ratio"] - 1) <= 0.03)
        out.write(json.dumps(row, default=str) + "\n")
        out.flush()
        print(f"{time.time() - started:.0f} s {os.path.basename(problem)} {candidate}: {row['verdicts']} "
              f"ratio {row['speedup_ratio']}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
