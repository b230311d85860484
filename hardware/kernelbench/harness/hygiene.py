"""Problem hygiene for KernelBench-format problems (issue 6): reports problems whose correctness
check is vacuous, so a leaderboard can list them instead of scoring them silently. For each
problem, on the GPU: the reference called twice on the same inputs (a stochastic reference),
compared with zeros under the tolerance (an all-zero output passes), and on two independent
input draws (an output that barely depends on its input). Rules: hygiene_rules.py. On a GPU
(torch >= 2) the model is built and the inputs are drawn on the device itself: drawing a 6.4 GB
input on the CPU and copying it cost most of the check's 14 s per problem. Each line says how
long the check took ("seconds"); kmcts checks a campaign's problems in one process (torch's start
paid once) and caches the findings per problem file (kernelbench_hygiene.hpp).

Usage: python3 hygiene.py [--tolerance current|paper] [--device 0|cpu] PROBLEM.py...
Prints one JSON line per problem."""

import argparse
import json
import sys
import time

import hygiene_rules
import kb_metrics
from faithful import SEED, device_of, load_module, on_device, set_seed, to_device


def measure(problem, device, tol):
    import torch
    set_seed(SEED)
    init = to_device(problem.get_init_inputs(), device)
    set_seed(SEED)
    with on_device(device):
        model = problem.Model(*init)
    model = model.to(device)

    def draw(seed):
        set_seed(seed)
        with on_device(device):
            return to_device(problem.get_inputs(), device)

    with torch.no_grad():
        a = draw(SEED)
        set_seed(SEED)
        out = model(*a).float()
        set_seed(SEED + 1)  # a different generator state: a stochastic forward shows
        again = model(*a).float()
        b = draw(SEED + 2)
        other = model(*b).float()
        zeros = torch.zeros_like(out)
        return {
            "rerun_max_abs_diff": float((out - again).abs().max().item()),
            "zero_max_abs_diff": float(out.abs().max().item()),
            "zero_allclose": bool(torch.allclose(zeros, out, atol=tol["atol"], rtol=tol["rtol"])),
            "input_change_max_abs": float((out - other).abs().max().item()) if other.shape == out.shape else float("inf"),
            "output_scale": float(out.abs().max().item()),
        }


def release(device):
    """Hands back what the last problem left cached on the device: kmcts checks a whole level in
    one process, and the next problem's inputs may need that room (level 1 holds 6.4 GB inputs)."""
    import gc
    gc.collect()
    if device.type == "cuda":
        import torch
        try:
            torch.cuda.empty_cache()
        except Exception:  # noqa: BLE001 - a sticky CUDA error: the next problem reports it
            pass


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("problems", nargs="+", help="KernelBench-format problem files")
    parser.add_argument("--tolerance", default="current", choices=sorted(kb_metrics.TOLERANCES))
    parser.add_argument("--device", default="0", help="GPU index, or cpu")
    args = parser.parse_args()
    device = device_of(args.device)
    tol = kb_metrics.tolerance(args.tolerance)
    for k, path in enumerate(args.problems):
        result = {"problem": path, "tolerance": tol}
        started = time.perf_counter()
        try:
            problem = load_module(path, f"kmcts_kb_hygiene_{k}")
            m = measure(problem, device, tol)
            result.update(measurements=m, findings=hygiene_rules.findings(m, tol["atol"], tol["rtol"]))
        except Exception as e:  # a broken problem file is a finding of its own
            result.update(error=f"{type(e).__name__}: {e}")
        result["seconds"] = time.perf_counter() - started
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()
        release(device)


if __name__ == "__main__":
    main()
