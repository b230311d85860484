"""kmcts's hardened KernelBench evaluation of one candidate (issue 6; the search's default reward).

The trusted side (this process) loads the problem, builds Model, draws every input and computes
every reference output; the candidate runs in a process of its own (candidate_worker.py) that
gets only ModelNew's file, the init inputs, and shared input and output tensors. Against the
faithful mode (faithful.py) it adds:
  - a static screen of the source (screen.py) for what no trace shows (fallbacks, streams,
    threads, patching, introspection, escapes): flagged candidates are rejected unless
    --screen record;
  - every kernel of the timed calls attributed (CUPTI launch callbacks in the candidate's
    process: hardware/cuda/cupti/kernel_attribution.hpp) to the candidate's own code or to a
    library; the result's "attribution" holds the own-kernel share, and --library-policy
    rejects a candidate none of whose kernels is its own (report, the default), above a library
    share (limit) or with any library kernel (all);
  - correctness on fresh inputs of several distributions (the problem's own draw, uniform
    [0,1), negated, heavy-tailed), a scale-aware tolerance (atol x max(1, RMS of expected) +
    rtol x |expected|) with NaN and inf parity, and the inputs checked unmodified;
  - timing by CUPTI across all streams (libkmcts_kb_timer.so) with an L2 flush before every
    call, candidate and references in alternating blocks over up to 16 input sets, each called
    once per block on values redrawn before it (no timed call sees inputs an earlier call saw),
    until REFERENCE.md's stopping rule holds; median with a bootstrap CI. The eager reference is
    timed as the candidate is, in a fresh process of its kind (--eager-process child), and each
    of the two processes builds its model up to 8 times and takes the builds in turn (where a
    build's weights land moves its time by up to 1.3%: bench/results/kb-aa.md);
  - every timed call's output checked; kernels that ran outside the timing windows (or while the
    candidate's process was stopped for the references' timing) rejected.

What it cannot stop: the timings of the candidate come from CUPTI inside the candidate's own
process, so candidate code that takes that process over (rewrites the harness's functions or
writes forged replies to its pipe) could report false times. Its replies are JSON read field by
field (never a verdict or code), a reported GPU time longer than the block's wall clock is
rejected, and the static screen rejects the ways in (file descriptors, ctypes, sys.modules,
dynamic imports); a determined attacker is not ruled out.

Usage: python3 hardened.py --problem P.py --candidate C.py [--device 0|cpu] [--timer-lib SO]
          [--tolerance current|paper] [--correctness-trials 5] [--no-compile] [--screen reject|record]
          [--library-policy report|limit|all|record] [--max-library-share 0.5]
          [--eager-process child|harness] [--instances 0]
Prints one JSON line on stdout (the same keys as faithful.py, plus screen, counters, attribution,
rejected)."""

import argparse
import contextlib
import json
import math
import os
import sys
import time
import traceback

import kb_metrics
import screen
from kb_checks import draw_inputs, mismatch, modified, output_scale
from candidate_process import Verdict, Warm, checked_samples
from ext_stage import stage_extensions
from timing_bound import BOUND_GPU_SPAN_SLACK_MS, BOUND_SLACK_PER_CALL_MS, GpuSpan, reference_overheads, timing_bound
from faithful import SEED, device_of
from kernel_table import KernelTable, tables_report

DISTRIBUTIONS = ("problem", "uniform", "negative", "heavy_tailed", "problem")
SET_BUDGET_BYTES = 4 << 30  # the timing's input sets together (inputs and outputs, shared and kept)
SETS = 16  # input sets, each called once per block on values redrawn before the block
# Builds of the model per timing process (candidate_worker.Instances: the timed calls rotate over
# them, so that where one build's weights landed is not a draw per side): up to INSTANCES, their
# parameters and buffers within INSTANCE_BUDGET_BYTES; one for a model without any, or on the CPU.
INSTANCES = 8
INSTANCE_BUDGET_BYTES = 2 << 30


def instance_count(reference, device, asked):
    """How many builds of the model each timing process makes (--instances, 0 = this rule)."""
    if asked > 0:
        return asked
    size = sum(t.numel() * t.element_size() for t in list(reference.parameters()) + list(reference.buffers()))
    if device.type != "cuda" or size == 0:
        return 1
    return max(1, min(INSTANCES, INSTANCE_BUDGET_BYTES // size))


def built(reply):
    """The builds a timing process reports it made (a count, bounded; 0 when it says none)."""
    n = reply.get("instances")
    return n if isinstance(n, int) and 1 <= n <= 64 else 0


def shared_pool(device, warm):
    """Where tensors the candidate's process gets are allocated: CUDA IPC hands over a whole
    allocator segment, so on a GPU they come from a pool of their own (torch.cuda.MemPool) and
    the expected outputs and pristine inputs, in the default pool, never share a segment with
    them. The pool is kept in `warm` until the evaluation is settled (serve.py), which checks
    that nothing in it outlived the candidate's process. Shared memory on the CPU is per tensor."""
    import contextlib
    import torch
    if device.type != "cuda":
        return contextlib.nullcontext
    if not hasattr(torch.cuda, "MemPool"):
        raise RuntimeError("torch.cuda.MemPool is missing (torch >= 2.6 needed for the hardened mode on a GPU)")
    pool = torch.cuda.MemPool()
    warm.shared_pool = pool
    return lambda: torch.cuda.use_mem_pool(pool)


def pool_allocated(snapshot, pool_id):
    """Bytes allocated in the segments of one allocator pool, from torch.cuda.memory_snapshot()."""
    return sum(int(seg.get("allocated_size", 0)) for seg in snapshot
               if tuple(seg.get("segment_pool_id") or ()) == tuple(pool_id))


def gpu_memory(device):
    """The trusted side's GPU memory in this evaluation, GiB: its peaks (allocated by tensors,
    reserved by torch's allocator) since the evaluation began. `device`: a torch.device or the
    harness's --device. None where no figure can be had (the CPU, or a GPU in a sticky error
    state)."""
    try:
        import torch
        device = device_of(device) if isinstance(device, str) else device
        if device.type != "cuda":
            return None
        return {"peak_allocated": torch.cuda.max_memory_allocated(device) / 2 ** 30,
                "peak_reserved": torch.cuda.max_memory_reserved(device) / 2 ** 30}
    except Exception:  # noqa: BLE001 - the verdict stands without the figure
        return None


def share(values, pool):
    """Copies of the tensors in `values`, allocated where the candidate may see them."""
    import torch
    with pool():
        out = [v.clone() if isinstance(v, torch.Tensor) else v for v in values]
    for v in out:
        if isinstance(v, torch.Tensor) and v.device.type == "cpu":
            v.share_memory_()
    return out


def check_correctness(problem, reference, child, device, trials, tol, pool):
    import torch
    torch.manual_seed(SEED)
    seeds = [int(torch.randint(0, 2 ** 32 - 1, (1,)).item()) for _ in range(trials)]
    report = []
    with torch.no_grad():
        for k, seed in enumerate(seeds):
            dist = DISTRIBUTIONS[k % len(DISTRIBUTIONS)]
            pristine = draw_inputs(problem, seed, dist, device)
            inputs = share(pristine, pool)
            expected = reference(*pristine)
            with pool():
                slot = torch.full_like(expected, float("nan")) if expected.is_floating_point() else torch.zeros_like(expected)
            if device.type == "cpu":
                slot.share_memory_()
            child.ask({"op": "bind", "key": k, "inputs": inputs, "slots": [slot]})
            child.ask({"op": "call", "key": k})
            child.ask({"op": "unbind", "key": k})
            trial = {"seed": seed, "distribution": dist}
            problem_text = modified(inputs, pristine) or mismatch(slot, expected, tol)
            trial.update(ok=problem_text is None)
            if problem_text:
                trial["error"] = problem_text
            report.append(trial)
            del pristine, inputs, expected, slot  # before the next trial's: a large problem holds one trial at a time
            if not trial["ok"]:
                break
    return seeds, report


class TimedSet:
    """One input set of the timing: the inputs and output slot the candidate gets (shared), and
    the pristine inputs and expected output it never sees."""

    def __init__(self, problem, reference, seed, device, pool, eager_slot=False):
        """eager_slot: a second output slot, for the reference's timing process (its outputs
        must never land where the candidate's are checked)."""
        import torch
        self.problem, self.reference, self.device = problem, reference, device
        self.pristine = draw_inputs(problem, seed, "problem", device)
        self.inputs = share(self.pristine, pool)
        self.expected = reference(*self.pristine)
        self.scale = output_scale(self.expected)
        with pool():
            self.slot = torch.empty_like(self.expected)
            self.eager_slot = torch.empty_like(self.expected) if eager_slot else None
        for slot in (self.slot, self.eager_slot):
            if slot is not None and device.type == "cpu":
                slot.share_memory_()

    def redraw(self, seed):
        """New values in the same buffers before every block: each timed call sees inputs no
        earlier call saw (an output cached by pointer or by a fingerprint goes stale)."""
        import torch
        self.pristine = self.expected = None  # let go first: a large problem holds one set's worth
        self.pristine = draw_inputs(self.problem, seed, "problem", self.device)
        for a, b in zip(self.inputs, self.pristine):
            if isinstance(a, torch.Tensor):
                a.copy_(b)
        self.expected = self.reference(*self.pristine)
        self.scale = output_scale(self.expected)
        self.slot.fill_(float("nan")) if self.slot.is_floating_point() else self.slot.zero_()


class Owners:
    """The timed calls' kernels by owner (kernel attribution in the candidate's process): summed
    durations and counts, and the library kernels by the object that launched them."""

    def __init__(self):
        self.ns = {"own": 0, "library": 0, "unknown": 0}
        self.kernels = {"own": 0, "library": 0, "unknown": 0}
        self.objects = {}
        self.attributed = True

    def add(self, samples):
        for x in samples:
            self.attributed = self.attributed and x["attributed"] == 1
            for k in self.ns:
                self.ns[k] += x[f"{k}_ns"]
                self.kernels[k] += x[f"{k}_kernels"]
            for name, (count, ns) in x.get("library_objects", {}).items():
                got = self.objects.setdefault(name, [0, 0])
                got[0], got[1] = got[0] + count, got[1] + ns

    def report(self, error=None):
        """The result's "attribution": own share of the kernel time (a kernel whose launch was not
        seen, "unknown", counts as not its own), and the sums."""
        if not self.attributed:
            return {"available": False, "error": error or "the candidate's process took no attributed samples"}
        total = sum(self.ns.values())
        return {"available": True, "own_share": self.ns["own"] / total if total else None,
                "own_ms": self.ns["own"] * 1e-6, "library_ms": self.ns["library"] * 1e-6,
                "unknown_ms": self.ns["unknown"] * 1e-6, "kernels": dict(self.kernels),
                "library_objects": {k: {"kernels": c, "ms": ns * 1e-6}
                                    for k, (c, ns) in sorted(self.objects.items(), key=lambda kv: -kv[1][1])}}


def library_verdict(report, policy, max_share):
    """Why the library policy rejects the candidate, or None. Every policy but record rejects a
    candidate whose timed calls ran kernels, none of them its own; a kernel whose launch was not
    seen (unknown) counts as not its own. limit and all cannot be judged without attribution: on
    a GPU that is an error of ours (RuntimeError), not a pass."""
    if policy == "record":
        return None
    if not report["available"]:
        if policy in ("limit", "all") and report.get("error") != "no GPU":
            raise RuntimeError(f"library_policy={policy} needs kernel attribution, which is unavailable: "
                               f"{report.get('error')}")
        return None
    kernels = report["kernels"]
    others = kernels["library"] + kernels["unknown"]
    top = ", ".join(f"{k} {v['kernels']}" for k, v in list(report["library_objects"].items())[:3])
    if kernels["unknown"]:
        top = (top + ", " if top else "") + f"{kernels['unknown']} whose launch was not seen"
    if kernels["own"] == 0 and others > 0:
        return f"no kernel of its own ran ({others} other kernels in the timed calls: {top})"
    share = 1.0 - (report["own_share"] if report["own_share"] is not None else 1.0)
    if policy == "limit" and share > max_share:
        return (f"{100 * share:.1f}% of its kernel time is in library kernels ({top}), above the limit of "
                f"{100 * max_share:g}%")
    if policy == "all" and others > 0:
        return f"{others} kernels not its own ran in its timed calls ({top}); every op must be its own"
    return None


def set_count(set_bytes, device):
    """Input sets for the timing: up to SETS within SET_BUDGET_BYTES and a quarter of the GPU's free
    memory (the reference's and the candidate's intermediates need the rest), and at least one
    (a problem whose one set fills the GPU is timed on that set, redrawn before every block)."""
    import torch
    budget = SET_BUDGET_BYTES
    if device.type == "cuda":
        torch.cuda.empty_cache()  # the correctness trials' tensors, freed
        budget = min(budget, torch.cuda.mem_get_info(device)[0] // 4)
    return max(1, min(SETS, budget // max(1, set_bytes)))


class EagerProcess:
    """The eager reference timed the way the candidate is (--eager-process child): Model built in
    a fresh process of the candidate's kind (candidate_worker.py, loaded with the problem's own
    file), on the same shared inputs, by the same block code, timer, L2 flush and rotation over
    builds, into slots of its own. With the builds in turn on both sides, the seeds of the real
    40_LayerNorm and 23_Softmax measured within +-0.3% of 1 (bench/results/kb-aa.md); the
    process alone, one build per side, had left LayerNorm's 1.009x.
    The process is ours, not the candidate's: what goes wrong in it is an infrastructure error."""

    def __init__(self, args, warm):
        """Starts the process (or takes the spare); load() gives it the problem."""
        self.args, self.child = args, warm.child(args, role="reference")
        self.table = KernelTable()  # its timed calls' kernels per launch

    @contextlib.contextmanager
    def ours(self):
        """A verdict of the process (it died, timed out, sent a bad reply) as an error of ours."""
        try:
            yield
        except Verdict as v:
            raise RuntimeError(f"the reference's timing process: {v}") from None

    def load(self, problem_path, init, instances):
        """The builds it made."""
        with self.ours():
            self.child.load(problem_path, init, {}, cls="Model", instances=instances)
            return built(self.child.ask(None, timeout=self.args.load_timeout, stage="load"))

    def bind(self, keys, sets):
        for key, s in zip(keys, sets):
            with self.ours():
                self.child.ask({"op": "bind", "key": key, "inputs": s.inputs, "slots": [s.eager_slot]})

    def time(self, keys, sets, tol, block):
        """One block: each set's call time (ms); its outputs checked as the candidate's are."""
        with self.ours():
            reply = self.child.ask({"op": "time", "keys": keys},
                                   timeout=min(self.args.call_timeout * len(keys), self.args.block_timeout))
            samples = checked_samples(reply, len(keys))
            self.table.add_reply(reply.get("kernel_table", []), len(samples))
        for k, s in enumerate(sets):
            bad = mismatch(s.eager_slot, s.expected, tol, s.scale)
            if bad:
                raise RuntimeError(f"the reference's timing process disagrees with the reference on input set {k} "
                                   f"of block {block}: {bad} (a Model whose weights depend on more than the seed?)")
        return [x["union_ns"] * 1e-6 for x in samples]

    def pause(self, stopped):
        self.child.pause(stopped, tree=False)  # it runs the problem's Model only

    def close(self):
        self.child.close()


def time_side(timer, model, sets, table=None):
    times = []
    for s in sets:
        timer.flush()
        sample, _ = timer.measure(lambda: model(*s.inputs))
        times.append(sample["union_ns"] * 1e-6)
        if table is not None:
            table.add(timer.kernel_table())
    return times


def timing(args, problem, reference, child, device, timer, tol, pool, warm, seconds, eager=None):
    import torch
    with torch.no_grad():
        return timing_loop(args, problem, reference, child, device, timer, tol, pool, warm, seconds, eager)


def timing_loop(args, problem, reference, child, device, timer, tol, pool, warm, seconds, eager=None):
    """Blocks until the stopping rule holds for every side; `seconds` gets where the time went
    (redraw, candidate, checks, references: wall seconds, the compile's warm-up included)."""
    import torch
    phase = {k: 0.0 for k in ("timing_redraw", "timing_candidate", "timing_checks", "timing_references",
                              "timing_compile")}
    clock = time.perf_counter
    probe = draw_inputs(problem, SEED, "problem", device)
    out = reference(*probe)
    set_bytes = (3 if eager is not None else 2) * out.element_size() * out.numel() + 2 * sum(
        v.element_size() * v.numel() for v in probe if isinstance(v, torch.Tensor))
    del probe, out
    count = set_count(set_bytes, device)
    sets = [TimedSet(problem, reference, SEED + 1 + k, device, pool, eager_slot=eager is not None)
            for k in range(count)]
    keys = [f"t{k}" for k in range(count)]
    for key, s in zip(keys, sets):
        child.ask({"op": "bind", "key": key, "inputs": s.inputs, "slots": [s.slot]})
    if eager is not None:
        eager.bind(keys, sets)
    bound = {"candidate_wall_ms": 0.0, "candidate_windows_ms": 0.0, "candidate_unions_ms": 0.0, "candidate_calls": 0,
             **reference_overheads(reference, timer, sets, keys, device),
             "slack_per_call_ms": BOUND_SLACK_PER_CALL_MS.get(device.type, BOUND_SLACK_PER_CALL_MS["cpu"])}
    sides = {"candidate": [], "eager": []}
    models = {"eager": reference}
    if args.compile and hasattr(torch, "compile"):  # torch < 2 has no torch.compile: not timed
        t0 = clock()
        models["compile"] = warm.compile(reference)
        sides["compile"] = []
        for _ in range(3):
            models["compile"](*sets[0].inputs)  # compiles outside the timing
        phase["timing_compile"] += clock() - t0
    seconds.update(phase)
    spent = {k: 0.0 for k in sides}
    counters = {"blocks": 0, "sets": count, "stray_kernels": 0, "copy_kernels": 0, "kernels_per_call": set(),
                "streams_per_call": set()}
    owners = Owners()
    tables = {"candidate": KernelTable(), "eager": eager.table if eager is not None else KernelTable()}

    def time_candidate(block):
        t0 = time.perf_counter()
        if eager is not None:
            eager.pause(True)
        try:
            span = GpuSpan(device)
            reply = child.ask({"op": "time", "keys": keys}, timeout=min(args.call_timeout * count, args.block_timeout))
            gpu_ms = span.end()
        finally:
            if eager is not None:
                eager.pause(False)
        wall = time.perf_counter() - t0
        spent["candidate"] += wall
        samples = checked_samples(reply, count)
        reported = [x["union_ns"] * 1e-6 for x in samples]
        bound["candidate_wall_ms"] += wall * 1e3
        bound["candidate_windows_ms"] += sum(x["window_ns"] * 1e-6 for x in samples)
        bound["candidate_unions_ms"] += sum(reported)
        bound["candidate_calls"] += count
        if gpu_ms is not None:
            bound["candidate_gpu_ms"] = bound.get("candidate_gpu_ms", 0.0) + gpu_ms
        timing_bound(bound, block)
        for clock_name, span_ms in (("wall time", wall * 1e3), ("GPU time (the trusted side's event pair)", gpu_ms)):
            if span_ms is not None and sum(reported) > span_ms + BOUND_GPU_SPAN_SLACK_MS:
                raise Verdict(rejected=f"timing_bound: the candidate's process reported {sum(reported):.3f} ms of GPU "
                                       f"time in a block that took {span_ms:.3f} ms of {clock_name}")
        sides["candidate"] += reported
        counters["stray_kernels"] += sum(x["stray_before"] + x["stray_after"] for x in samples) + reply["tail_stray"]
        counters["copy_kernels"] += reply["copy_kernels"]
        owners.add(samples)
        tables["candidate"].add_reply(reply.get("kernel_table", []), len(samples))
        counters["kernels_per_call"].update(x["kernels"] for x in samples)
        counters["streams_per_call"].update(x["streams"] for x in samples)
        seconds["timing_candidate"] += time.perf_counter() - t0
        t0 = clock()
        for k, s in enumerate(sets):
            bad = mismatch(s.slot, s.expected, tol, s.scale)
            if bad:
                raise Verdict(correct=False, timed_failure=True,
                              wrong_answer=f"timed call on input set {k} of block {block}: {bad}")
            bad = modified(s.inputs, s.pristine)
            if bad:
                raise Verdict(correct=False, timed_failure=True, wrong_answer=f"during timing: {bad}")
        if counters["stray_kernels"] > counters["copy_kernels"]:
            raise Verdict(rejected=f"{counters['stray_kernels'] - counters['copy_kernels']} kernels ran outside the "
                                   "timed windows (work left running or launched late)")
        seconds["timing_checks"] += clock() - t0

    def time_references(block):
        t0 = clock()
        child.pause(True)
        try:
            for k in sides:
                if k != "candidate":
                    t1 = time.perf_counter()
                    sides[k] += (eager.time(keys, sets, tol, block) if k == "eager" and eager is not None
                                 else time_side(timer, models[k], sets, tables.get(k)))
                    spent[k] += time.perf_counter() - t1
        finally:
            child.pause(False)
        seconds["timing_references"] += clock() - t0

    block = 0
    while not all(kb_metrics.enough_samples(sides[k], spent[k], max_time_s=args.max_time_s) for k in sides):
        block += 1
        t0 = clock()
        for k, s in enumerate(sets):
            s.redraw(SEED + 100003 * block + k)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        seconds["timing_redraw"] += clock() - t0
        # The sides' order alternates by block (candidate first, then the references first):
        # whatever the GPU carries from one side into the next (clocks, caches, the other
        # process's context) falls on each side alike.
        steps = (time_candidate, time_references) if block % 2 else (time_references, time_candidate)
        for step in steps:
            step(block)
    if kb_metrics.median(sides["candidate"]) <= 0:
        raise Verdict(rejected="no GPU work was recorded in the candidate's timed calls")
    counters["blocks"] = block
    counters["timing_bound"] = bound
    counters["kernels_per_call"] = sorted(counters["kernels_per_call"])
    counters["streams_per_call"] = sorted(counters["streams_per_call"])
    return sides, counters, owners, tables_report(tables["candidate"], tables["eager"])


def evaluate(args, warm=None, env=None):
    """One candidate's evaluation (a dict, the JSON line). `env`: variables for the candidate's
    process (its extension folder); `warm`: a Warm to reuse."""
    import torch
    out = {"mode": "hardened", "score": "median", "problem": args.problem, "candidate": args.candidate,
           "tolerance": kb_metrics.tolerance(args.tolerance), "torch": torch.__version__}
    seconds = {}
    with open(args.candidate, encoding="utf-8", errors="replace") as f:
        out["screen"] = screen.screen_source(f.read())
    if out["screen"]["verdict"] == "unparsable":
        out.update(compiled=False, correct=False, error=out["screen"]["findings"][0]["detail"])
        return out
    if out["screen"]["verdict"] == "flagged" and args.screen == "reject":
        rules = sorted({f["rule"] for f in out["screen"]["findings"]})
        first = out["screen"]["findings"][0]
        out.update(compiled=True, correct=False,
                   rejected=f"static screen: {', '.join(rules)} (line {first['line']}: {first['detail']})")
        return out
    device = device_of(args.device)
    out["device"] = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)  # a warm harness's earlier evaluations are not this one's
        out["harness_gpu_memory_gib"] = {"held_at_start": torch.cuda.memory_reserved(device) / 2 ** 30}
    tol = out["tolerance"]
    warm = warm or Warm()
    timer = warm.timer(device, args.timer_lib)
    problem, init, reference = warm.reference(args.problem, device)
    staged = stage_extensions(os.environ if env is None else env)
    if staged is not None:
        seconds["stage_extensions"] = staged
    t0 = time.perf_counter()
    child = warm.child(args)
    eager = EagerProcess(args, warm) if args.eager_process == "child" else None  # starts while the candidate loads
    instances = {"asked": instance_count(reference, device, args.instances)}
    try:
        try:
            child.load(args.candidate, init, env or {}, instances=instances["asked"])
            out["candidate_guard"] = child.guard
            ready = child.ask(None, timeout=args.load_timeout, stage="load")
        except Verdict as v:
            if v.fields.get("stage") == "load" or v.fields.get("timeout"):
                v.fields["compiled"] = False
            raise
        seconds["load"] = time.perf_counter() - t0
        instances["candidate"] = built(ready)
        out["instances"] = instances
        out["compiled"] = True
        t0 = time.perf_counter()
        pool = shared_pool(device, warm)
        out["correctness_seeds"], out["trials"] = check_correctness(problem, reference, child, device,
                                                                    args.correctness_trials, tol, pool)
        seconds["correctness"] = time.perf_counter() - t0
        out["correct"] = all(t["ok"] for t in out["trials"])
        if not out["correct"]:
            return out
        t0 = time.perf_counter()
        if eager is not None:
            instances["eager"] = eager.load(args.problem, init, instances["asked"])
            seconds["eager_load"] = time.perf_counter() - t0
        warm.pause_spare(True)
        try:
            sides, out["counters"], owners, tables = timing(args, problem, reference, child, device, timer, tol, pool,
                                                            warm, seconds, eager)
            if tables is not None:
                out["kernel_tables"] = tables
        finally:
            warm.pause_spare(False)
        seconds["timing"] = time.perf_counter() - t0
        error = ready.get("attribution_error")
        out["attribution"] = owners.report(str(error)[:1000] if error else None if device.type == "cuda" else "no GPU")
        why = library_verdict(out["attribution"], args.library_policy, args.max_library_share)
        if why:
            raise Verdict(rejected=why)
    except Verdict as v:
        out.update(v.fields)
        out.setdefault("compiled", True)
        out.setdefault("correct", False)
        return out
    finally:
        out["seconds"] = seconds
        child.close()
        if eager is not None:
            eager.close()
        if device.type == "cuda":  # the trusted side's peak in this evaluation: what a problem's size costs here
            out.setdefault("harness_gpu_memory_gib", {}).update(gpu_memory(device) or {})
    out["runtime_ms"] = {k: dict(kb_metrics.timing_stats(v), median=kb_metrics.median(v),
                                 rse=kb_metrics.median_rse(v), times_ms=v) for k, v in sides.items()}
    cand = sides["candidate"]
    out["speedup"] = {k: kb_metrics.median(sides[k]) / kb_metrics.median(cand) for k in sides if k != "candidate"}
    out["speedup_ci"] = {k: kb_metrics.bootstrap_speedup_ci(sides[k], cand) for k in sides if k != "candidate"}
    return out


def finite(value):
    """The result with every inf and NaN replaced by None (JSON has neither)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def make_parser():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problem", required=True)
    parser.add_argument("--candidate", required=True)
    parser.add_argument("--device", default="0", help="GPU index, or cpu (tests of the protocol logic only)")
    parser.add_argument("--timer-lib", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                            "libkmcts_kb_timer.so"))
    parser.add_argument("--tolerance", default="current", choices=sorted(kb_metrics.TOLERANCES))
    parser.add_argument("--correctness-trials", type=int, default=5)
    parser.add_argument("--no-compile", dest="compile", action="store_false")
    parser.add_argument("--screen", default="reject", choices=("reject", "record"))
    parser.add_argument("--library-policy", default="report", choices=("report", "limit", "all", "record"),
                        help="library kernels in the timed calls: report (allowed, and recorded), limit (rejected "
                             "above --max-library-share of the kernel time), all (rejected: every op its own), "
                             "record (never rejected: the seed); all but record reject a candidate none of whose "
                             "kernels is its own")
    parser.add_argument("--max-library-share", type=float, default=0.5)
    parser.add_argument("--instances", type=int, default=0,
                        help="builds of the model per timing process, the timed calls in turn on each (0: up to "
                             f"{INSTANCES} on a GPU, their weights within {INSTANCE_BUDGET_BYTES >> 30} GiB; 1 on the CPU)")
    parser.add_argument("--eager-process", default="child", choices=("child", "harness"),
                        help="where the eager reference is timed: in this trusted process (harness) or in a fresh "
                             "process of the candidate's kind, by the same block code (child)")
    parser.add_argument("--load-timeout", type=float, default=600.0, help="seconds for the candidate to load (builds included)")
    parser.add_argument("--call-timeout", type=float, default=60.0, help="seconds per candidate call")
    parser.add_argument("--max-time-s", type=float, default=2.0, help="sampling time cap per side")
    parser.add_argument("--block-timeout", type=float, default=120.0, help="seconds for one block of timed calls")
    return parser


def evaluate_line(args, warm=None, env=None):
    """evaluate() as the JSON line the harness prints: a failure of the trusted side is an
    infra_error, not a verdict."""
    started = time.perf_counter()
    try:
        result = evaluate(args, warm, env)
    except Exception as e:  # the trusted side failed: an infrastructure error, not a verdict
        result = {"mode": "hardened", "infra_error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()[-4000:]}
        memory = gpu_memory(str(args.device)) if "torch" in sys.modules else None
        if memory:  # an out-of-memory on the trusted side: what it held says whether the problem fits at all
            result["harness_gpu_memory_gib"] = memory
    result["seconds_total"] = time.perf_counter() - started
    return json.dumps(finite(result), allow_nan=False, default=str)


def main():
    from candidate_worker import undumpable
    undumpable()
    args = make_parser().parse_args()
    sys.stdout.write(evaluate_line(args) + "\n")
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
