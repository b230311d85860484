"""Does where a tensor lands in GPU memory change a KernelBench kernel's time? (issue 25, item 6:
the seeds' A/A offset of about 0.9% that follows the evaluation, not the side.)

One process, one problem's reference model: COPIES independent copies of its inputs (--what
inputs) or of the model, its weights and buffers (--what model) are made (each a fresh
allocation, all kept alive, with PAD_MIB of padding allocated between them so that they land
apart), then timed round-robin, ROUNDS rounds of CALLS calls per copy, L2 flushed
before each call as the hardened harness does. Prints one JSON line: each copy's median and its
ratio to copy 0. If the copies' medians differ by about the A/A offset with tight spread, the
placement of the buffers explains it. Run it twice: fresh processes place differently.

Usage: python3 placement_probe.py PROBLEM.py [--what inputs|model] [--copies 6] [--rounds 30] [--calls 5] [--pad-mib 64]
Not run in CI (needs a GPU); its figures go to bench/results/kb-aa.md."""

import argparse
import copy
import importlib.util
import json
import statistics

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("problem")
    ap.add_argument("--copies", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--pad-mib", type=int, default=64)
    ap.add_argument("--what", default="inputs", choices=("inputs", "model"))
    args = ap.parse_args()
    spec = importlib.util.spec_from_file_location("problem", args.problem)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    torch.manual_seed(0)
    model = mod.Model(*mod.get_init_inputs()).cuda().eval()
    base = [x.cuda() if isinstance(x, torch.Tensor) else x for x in mod.get_inputs()]
    copies, models, pads = [], [], []
    for _ in range(args.copies):
        if args.what == "inputs":
            copies.append([x.clone() if isinstance(x, torch.Tensor) else x for x in base])
            models.append(model)
        else:
            copies.append(base)
            models.append(copy.deepcopy(model))
        pads.append(torch.empty(args.pad_mib << 20, dtype=torch.uint8, device="cuda"))
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    times = [[] for _ in copies]
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with torch.no_grad():
        for model, inputs in zip(models, copies):
            model(*inputs)
        torch.cuda.synchronize()
        for _ in range(args.rounds):
            for k, (model, inputs) in enumerate(zip(models, copies)):
                for _ in range(args.calls):
                    flush.zero_()
                    start.record()
                    model(*inputs)
                    stop.record()
                    stop.synchronize()
                    times[k].append(start.elapsed_time(stop))
    medians = [statistics.median(t) for t in times]
    spread = []
    for t in times:  # interquartile range relative to the median: how tight each copy is
        q = statistics.quantiles(t, n=4)
        spread.append(round((q[2] - q[0]) / statistics.median(t), 5))
    first = [next(iter(m.parameters()), None) for m in models] if args.what == "model" else [c[0] for c in copies]
    addresses = [hex(x.data_ptr()) if isinstance(x, torch.Tensor) else None for x in first]
    print(json.dumps({"problem": args.problem.split("/")[-1], "what": args.what, "medians_ms": [round(m, 5) for m in medians],
                      "ratio_to_copy0": [round(m / medians[0], 5) for m in medians], "iqr_rel": spread,
                      "addresses": addresses}))


if __name__ == "__main__":
    main()
