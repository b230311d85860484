"""The timing bound of the hardened KernelBench harness (rule timing_bound, issue 28 item 4): what
the trusted side measures of each block of a candidate's timed calls itself, and the verdict when
the times the candidate's process reported disagree with it. hardened.py calls it per block."""

import time

from candidate_process import Verdict

# The timing bound (rule timing_bound): over all blocks, the wall time the trusted side saw a
# candidate's blocks take, less the call windows its process reported, may exceed what the same
# block code (candidate_worker.time_block: the L2 flush, the timed call, the output's copy into
# its slot) leaves outside its windows when the trusted side runs it on the reference, by half
# again, plus a slack per call (0.2 ms on a GPU; 5 ms on the CPU, whose windows are wall clocks of
# a process scheduled among others) and per block (the messages, the process's wake-up, a
# scheduling hiccup), and never less than BOUND_FLOOR_MS. More means the reported times are too
# short: the process that reports them was taken over. Checked after every block.
BOUND_OUTSIDE_FACTOR = 1.5
BOUND_SLACK_PER_BLOCK_MS = 5.0
BOUND_SLACK_PER_CALL_MS = {"cuda": 0.2, "cpu": 5.0}
BOUND_FLOOR_MS = 50.0
# A block's reported GPU time may exceed the trusted side's span of it by no more than this (the
# two clocks' rounding: CUPTI's timestamps against the event pair's 0.5 us resolution).
BOUND_GPU_SPAN_SLACK_MS = 0.05


def reference_overheads(reference, timer, sets, keys, device):
    """What the candidate's block code leaves unreported per call (ms), learnt on the reference:
    the trusted side runs candidate_worker.time_block itself on the reference and the sets (twice:
    the first warms up; the slots are overwritten by every later call). outside_per_call_ms: wall
    time outside the call windows; gap_per_call_ms: time inside the windows off the GPU union
    (launches, synchronisation, host work; 0 on the CPU, whose windows are the union)."""
    import candidate_worker
    bound = {key: (s.inputs, [s.slot]) for key, s in zip(keys, sets)}
    found = {}
    for _ in range(2):
        t0 = time.perf_counter()
        reply = candidate_worker.time_block(candidate_worker.Instances([reference]), timer, bound, keys, device)
        wall = (time.perf_counter() - t0) * 1e3
        windows = sum(x["window_ns"] * 1e-6 for x in reply["samples"])
        unions = sum(x["union_ns"] * 1e-6 for x in reply["samples"])
        found = {"outside_per_call_ms": max(0.0, wall - windows) / len(keys),
                 "gap_per_call_ms": max(0.0, windows - unions) / len(keys)}
    return found


class GpuSpan:
    """The trusted side's own GPU clock around a block of the candidate's calls: a CUDA event
    recorded on the harness's stream before the request and one after the reply, read by the
    harness (the candidate's process has its own context and cannot reach them). The harness's
    stream is idle at both records (the redraw and the references synchronise), so the pair spans
    the request, the candidate's work and the reply on the GPU's clock. None on the CPU."""

    def __init__(self, device):
        import torch
        self.start = self.stop = None
        if device.type == "cuda":
            self.start = torch.cuda.Event(enable_timing=True)
            self.stop = torch.cuda.Event(enable_timing=True)
            self.start.record()
            # Taken before the request goes: a start the GPU ran late (another context busy)
            # would make the span shorter than the candidate's work.
            self.start.synchronize()

    def end(self):
        if self.start is None:
            return None
        self.stop.record()
        self.stop.synchronize()
        return self.start.elapsed_time(self.stop)


def timing_bound(bound, blocks):
    """Verdict when the candidate's reports leave more of its blocks unaccounted for than the
    trusted side's overheads allow (see BOUND_SLACK_PER_BLOCK_MS): its windows too little of the
    blocks' wall time, or (where the reference's gap is known) its GPU time too little of its
    windows, which a process taken over could shrink while leaving its windows honest. On a GPU
    the event pairs' span is recorded too; it lies inside the wall span, so it cannot shorten
    what is unaccounted for. What it adds is the per-block check in time_candidate: no more GPU
    time reported than the GPU's own clock saw pass."""
    base = max(BOUND_FLOOR_MS, blocks * BOUND_SLACK_PER_BLOCK_MS)
    per_call = BOUND_OUTSIDE_FACTOR * bound["outside_per_call_ms"] + bound["slack_per_call_ms"]
    allowed = base + bound["candidate_calls"] * per_call
    unaccounted = bound["candidate_wall_ms"] - bound["candidate_windows_ms"]
    bound.update(allowed_ms=allowed, unaccounted_ms=unaccounted)
    if "candidate_gpu_ms" in bound:  # recorded: the GPU span lies inside the wall span, so the wall decides
        bound["unaccounted_gpu_ms"] = bound["candidate_gpu_ms"] - bound["candidate_windows_ms"]
    if unaccounted > allowed:
        raise Verdict(rejected=f"timing_bound: the candidate's process reported {bound['candidate_windows_ms']:.3f} "
                               f"ms of call windows in blocks that took {bound['candidate_wall_ms']:.3f} ms of wall "
                               f"time; {unaccounted:.3f} ms unaccounted for, more than the {allowed:.3f} ms the "
                               "trusted side's own overheads allow (its reported times are too short)")
    if "gap_per_call_ms" not in bound or "candidate_unions_ms" not in bound:
        return
    gap = bound["candidate_windows_ms"] - bound["candidate_unions_ms"]
    allowed_gap = base + bound["candidate_calls"] * (BOUND_OUTSIDE_FACTOR * bound["gap_per_call_ms"] +
                                                     bound["slack_per_call_ms"])
    bound.update(allowed_gap_ms=allowed_gap, gap_ms=gap)
    if gap > allowed_gap:
        raise Verdict(rejected=f"timing_bound: the candidate's process reported {bound['candidate_unions_ms']:.3f} ms "
                               f"of timed work inside {bound['candidate_windows_ms']:.3f} ms of call windows; "
                               f"{gap:.3f} ms of them off the timed work, more than the {allowed_gap:.3f} ms the "
                               "reference's calls allow (its reported times are too short, or its calls do host "
                               "work between kernels)")
