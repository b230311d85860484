"""kmcts's faithful KernelBench evaluation of one candidate (issue 6, faithful mode).

Reproduces the official protocol (REFERENCE.md, KernelBench): fp32; torch.manual_seed(42)
before get_init_inputs(), before Model(...) and before ModelNew(...); correctness on 5 trials
whose seeds are drawn after manual_seed(42), each trial seeding get_inputs() and both forwards;
allclose with the tolerance of the chosen generation; timing by CUDA events on the current
stream: 3 warm-up calls, then 100 timed calls (one more, the first, discarded), each after a
256 MB fill, scored by the mean. The candidate is timed against PyTorch eager (the Model) and
torch.compile (inductor, default mode) on the same GPU in the same run.

Like KernelBench's own runner it loads the candidate into this process: it is not the hardened
mode and no defence against cheats. Written for kmcts; no code is taken from KernelBench.

Usage: python3 faithful.py --problem LEVEL/N_name.py --candidate CAND.py [--tolerance current|paper]
          [--trials 100] [--correctness-trials 5] [--no-compile] [--device 0|cpu]
Prints one JSON line on stdout (stdout of the candidate goes to stderr)."""

import argparse
import contextlib
import importlib.util
import json
import os
import sys
import time
import traceback

import kb_metrics
from ext_stage import stage_extensions

SEED = 42
FILL_BYTES = 256 << 20
WARMUP = 3


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def to_device(values, device):
    import torch
    return [v.to(device) if isinstance(v, torch.Tensor) else v for v in values]


def on_device(device):
    """Where new tensors are made: `device` itself with torch >= 2 (hardened mode's and the
    hygiene check's draws, not KernelBench's official CPU draw, which this mode keeps), else
    the default."""
    import torch
    return torch.device(device) if hasattr(torch.device, "__enter__") else contextlib.nullcontext()


def set_seed(seed):
    import torch
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed(seed)  # the current device's generator, as the official runner


def synchronize(device):
    import torch
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def device_of(arg):
    """'cpu' (tests of the protocol logic, e.g. on CI with Debian's python3-torch) or a GPU index."""
    import torch
    if arg == "cpu":
        return torch.device("cpu")
    device = torch.device(f"cuda:{int(arg)}")
    torch.cuda.set_device(device)
    return device


def build(problem, candidate_cls, device):
    """Model and ModelNew built from the same seeded init inputs, as the official runner does."""
    import torch
    set_seed(SEED)
    init = to_device(problem.get_init_inputs(), device)
    with torch.no_grad():
        set_seed(SEED)
        reference = problem.Model(*init)
        set_seed(SEED)
        candidate = candidate_cls(*init)
    return reference, candidate


def check_correctness(problem, reference, candidate, device, trials, tol):
    import torch
    torch.manual_seed(SEED)
    seeds = [int(torch.randint(0, 2 ** 32 - 1, (1,)).item()) for _ in range(trials)]
    report = []
    with torch.no_grad():
        for seed in seeds:
            set_seed(seed)
            inputs = to_device(problem.get_inputs(), device)
            set_seed(seed)
            reference = reference.to(device)
            set_seed(seed)
            candidate = candidate.to(device)
            expected = reference(*inputs)
            got = candidate(*inputs)
            synchronize(device)
            trial = {"seed": seed}
            if not isinstance(got, torch.Tensor) or got.shape != expected.shape:
                trial.update(ok=False, error=f"output shape {getattr(got, 'shape', type(got).__name__)}, "
                                             f"expected {tuple(expected.shape)}")
            else:
                diff = (got.float() - expected.float()).abs()
                trial.update(ok=bool(torch.allclose(got, expected, atol=tol["atol"], rtol=tol["rtol"])),
                             max_abs_diff=float(diff.max().item()), mean_abs_diff=float(diff.mean().item()))
            report.append(trial)
            if not trial["ok"]:
                break
    return report


def stats_with_times(times):
    stats = kb_metrics.timing_stats(times)
    stats["times_ms"] = times  # the raw timings, for the evaluator's statistics
    return stats


def time_model(model, inputs, device, trials):
    import torch
    if device.type != "cuda":
        return time_model_cpu(model, inputs, trials)
    fill = torch.empty(FILL_BYTES // 4, dtype=torch.float32, device=device)
    times = []
    with torch.no_grad():
        for _ in range(WARMUP):
            model(*inputs)
        torch.cuda.synchronize(device)
        for t in range(trials + 1):
            fill.fill_(float(t))  # evicts the L2 between calls
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            model(*inputs)
            end.record()
            torch.cuda.synchronize(device)
            if t > 0:
                times.append(start.elapsed_time(end))
    return stats_with_times(times)


def time_model_cpu(model, inputs, trials):
    """Wall-clock timing for --device cpu: the same warm-up and discarded first call, no fill.
    Not KernelBench's protocol (that is GPU-only); it lets the rest be tested without a GPU."""
    import torch
    times = []
    with torch.no_grad():
        for _ in range(WARMUP):
            model(*inputs)
        for t in range(trials + 1):
            start = time.perf_counter()
            model(*inputs)
            if t > 0:
                times.append((time.perf_counter() - start) * 1e3)
    return stats_with_times(times)


def evaluate(args):
    import torch
    out = {"mode": "faithful", "problem": args.problem, "candidate": args.candidate,
           "tolerance": kb_metrics.tolerance(args.tolerance), "torch": torch.__version__}
    device = device_of(args.device)
    out["device"] = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    seconds = {}
    staged = stage_extensions(os.environ)
    if staged is not None:
        seconds["stage_extensions"] = staged
    t0 = time.perf_counter()
    problem = load_module(args.problem, "kmcts_kb_problem")
    try:
        with contextlib.redirect_stdout(sys.stderr):
            candidate_module = load_module(args.candidate, "kmcts_kb_candidate")
        candidate_cls = getattr(candidate_module, "ModelNew")
    except Exception as e:  # a candidate that does not build or load is not compiled
        out.update(compiled=False, correct=False, error=f"{type(e).__name__}: {e}",
                   traceback=traceback.format_exc()[-4000:])
        return out
    seconds["load"] = time.perf_counter() - t0
    out["compiled"] = True
    t0 = time.perf_counter()
    try:
        with contextlib.redirect_stdout(sys.stderr):
            reference, candidate = build(problem, candidate_cls, device)
            trials = check_correctness(problem, reference, candidate, device, args.correctness_trials, out["tolerance"])
    except Exception as e:  # a runtime error in the candidate
        out.update(correct=False, error=f"{type(e).__name__}: {e}", traceback=traceback.format_exc()[-4000:])
        return out
    seconds["correctness"] = time.perf_counter() - t0
    out["trials"] = trials
    out["correct"] = len(trials) == args.correctness_trials and all(t["ok"] for t in trials)
    if not out["correct"]:
        out["seconds"] = seconds
        return out
    t0 = time.perf_counter()
    set_seed(SEED)
    inputs = to_device(problem.get_inputs(), device)
    reference, candidate = reference.to(device), candidate.to(device)
    runtime = {"candidate": time_model(candidate, inputs, device, args.trials),
               "eager": time_model(reference, inputs, device, args.trials)}
    if args.compile and hasattr(torch, "compile"):  # torch < 2 has no torch.compile: not timed
        compiled = torch.compile(reference)  # inductor, default mode
        runtime["compile"] = time_model(compiled, inputs, device, args.trials)
    seconds["timing"] = time.perf_counter() - t0
    out["runtime_ms"] = runtime
    out["speedup"] = {k: kb_metrics.speedup(runtime[k]["mean"], runtime["candidate"]["mean"])
                      for k in ("eager", "compile") if k in runtime}
    # Upstream's eval flags a speedup over eager above its threshold (metadata, not a verdict).
    out["excessive_speedup"] = (out["speedup"]["eager"] or 0) > kb_metrics.EXCESSIVE_SPEEDUP
    out["seconds"] = seconds
    return out


def make_parser():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problem", required=True, help="KernelBench-format problem file (Model, get_inputs, ...)")
    parser.add_argument("--candidate", required=True, help="candidate file defining ModelNew")
    parser.add_argument("--tolerance", default="current", choices=sorted(kb_metrics.TOLERANCES),
                        help="allclose tolerance generation: current (1e-4) or paper (1e-2)")
    parser.add_argument("--trials", type=int, default=100, help="timed calls per model (one more is discarded)")
    parser.add_argument("--correctness-trials", type=int, default=5)
    parser.add_argument("--no-compile", dest="compile", action="store_false", help="skip the torch.compile baseline")
    parser.add_argument("--device", default="0", help="GPU index, or cpu (tests of the protocol logic only)")
    return parser


def evaluate_line(args):
    started = time.perf_counter()
    result = evaluate(args)
    result["seconds_total"] = time.perf_counter() - started
    return json.dumps(result)


def main():
    sys.stdout.write(evaluate_line(make_parser().parse_args()) + "\n")
    sys.stdout.flush()
    os._exit(0)  # extensions and compile workers must not delay or crash the exit


if __name__ == "__main__":
    main()
