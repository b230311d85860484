"""One call of a KernelBench candidate, for a tool that watches the process from outside (issue 30):
Nsight Compute (ncu --profile-from-start off: the deep profile of evaluator.kernelbench.profile)
or compute-sanitizer (the diagnosis of a fault: which kernel, thread and address). kmcts runs it
after the evaluation, never on the measurement path, confined as the harness is (its own view,
its private /tmp, no network, no home; under root a uid of its own) and with the candidate's
staged extensions, in a process of its own: no trusted state shares it, and what the tool
reports is feedback for the agents, never part of a verdict.

The model is built as the evaluation builds it (the problem's init inputs, torch.manual_seed(42)
before each build), on inputs drawn as the first correctness trial's; one warm-up call (loads,
JIT builds, autotuning), then one call between cudaProfilerStart and cudaProfilerStop, each
synchronised. An exception or a CUDA error in either call is reported, not raised: a fault
under compute-sanitizer is what that run is for.

Usage: python3 one_call.py --problem LEVEL/N_name.py --candidate CAND.py [--device 0|cpu]
Prints one JSON line on stdout: {"ok": true} or {"ok": false, "stage": ..., "error": ...}
(the candidate's prints go to stderr)."""

import argparse
import json
import os
import sys
import traceback

from ext_stage import stage_extensions
from faithful import SEED, device_of, load_module, on_device, set_seed


def one_call(problem_path, candidate_path, device_arg):
    import torch
    device = device_of(device_arg)
    stage_extensions(os.environ)
    stage = "load"
    try:
        problem = load_module(problem_path, "kmcts_kb_problem")
        candidate = load_module(candidate_path, "kmcts_kb_candidate")
        stage = "init"
        set_seed(SEED)
        with on_device(device):
            init = problem.get_init_inputs()
        init = [v.to(device) if isinstance(v, torch.Tensor) else v for v in init]
        set_seed(SEED)
        with torch.no_grad():
            model = candidate.ModelNew(*init)
        if isinstance(model, torch.nn.Module):
            model = model.to(device)
        set_seed(SEED)
        with on_device(device):
            inputs = problem.get_inputs()
        inputs = [v.to(device) if isinstance(v, torch.Tensor) else v for v in inputs]
        cuda = device.type == "cuda"
        with torch.no_grad():
            stage = "warm-up call"
            model(*inputs)
            if cuda:
                torch.cuda.synchronize(device)
            stage = "profiled call"
            if cuda:
                torch.cuda.cudart().cudaProfilerStart()
            try:
                model(*inputs)
                if cuda:
                    torch.cuda.synchronize(device)
            finally:
                if cuda:
                    torch.cuda.cudart().cudaProfilerStop()
    except BaseException as e:  # noqa: BLE001 - SystemExit from a failed build included
        return {"ok": False, "stage": stage, "error": f"{type(e).__name__}: {e}"[:2000],
                "traceback": traceback.format_exc()[-4000:]}
    return {"ok": True}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problem", required=True)
    parser.add_argument("--candidate", required=True)
    parser.add_argument("--device", default="0")
    args = parser.parse_args()
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # the candidate's prints go to stderr: stdout holds our line alone
    sys.stdout = sys.stderr
    out.write(json.dumps(one_call(args.problem, args.candidate, args.device)) + "\n")
    out.flush()


if __name__ == "__main__":
    main()
