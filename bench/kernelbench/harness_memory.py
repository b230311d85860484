"""The hardened harness's memory on a problem of one large input: a ReLU whose input is ROWS x
COLS floats, evaluated in this process (hardened.evaluate_line) with a clamp candidate, then the
trusted side's peak: its peak RSS on the CPU (a stand-in where no GPU is lent: the tensors are
the same count, the caching allocator's reserve aside), and the harness's own peak GPU memory
figures (harness_gpu_memory_gib) on a GPU. The candidate's and the reference's timing processes
are not counted.

usage: python3 bench/kernelbench/harness_memory.py [--harness DIR] [--rows 16384] [--cols 16384]
           [-- HARNESS_ARGS...]   (default harness args: --device cpu --no-compile --max-time-s 0.1)
Prints one JSON line."""

import argparse
import json
import os
import resource
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")

PROBLEM = """import torch
import torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)
def get_inputs():
    return [torch.rand({rows}, {cols})]
def get_init_inputs():
    return []
"""
CANDIDATE = """import torch
import torch.nn as nn
class ModelNew(nn.Module):
    def forward(self, x):
        return torch.clamp_min(x, 0.0)
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--harness", default=os.path.join(ROOT, "hardware", "kernelbench", "harness"))
    parser.add_argument("--rows", type=int, default=16384)
    parser.add_argument("--cols", type=int, default=16384)
    parser.add_argument("rest", nargs="*")
    args = parser.parse_args()
    sys.path.insert(0, os.path.abspath(args.harness))
    import hardened
    with tempfile.TemporaryDirectory() as work:
        problem, candidate = os.path.join(work, "relu.py"), os.path.join(work, "cand.py")
        with open(problem, "w") as f:
            f.write(PROBLEM.format(rows=args.rows, cols=args.cols))
        with open(candidate, "w") as f:
            f.write(CANDIDATE)
        harness_args = args.rest or ["--device", "cpu", "--no-compile", "--max-time-s", "0.1"]
        result = json.loads(hardened.evaluate_line(hardened.make_parser().parse_args(
            ["--problem", problem, "--candidate", candidate, *harness_args])))
    input_gib = args.rows * args.cols * 4 / 2 ** 30
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20
    print(json.dumps({"harness": os.path.abspath(args.harness), "input_gib": input_gib, "peak_rss_gib": peak,
                      "peak_rss_in_inputs": peak / input_gib, "harness_gpu_memory_gib": result.get("harness_gpu_memory_gib"),
                      "correct": result.get("correct"), "infra_error": result.get("infra_error")}))


if __name__ == "__main__":
    main()
