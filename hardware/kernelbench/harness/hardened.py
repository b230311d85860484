"""kmcts's hardened KernelBench evaluation of one candidate (issue 6; the search's default reward).

The trusted side (this process) loads the problem, builds Model, draws every input and computes
every reference output; the candidate runs in a process of its own (candidate_worker.py) that
gets only ModelNew's file, the init inputs, and shared input and output tensors. Against the
faithful mode (faithful.py) it adds:
  - a static screen of the source (screen.py): flagged candidates are rejected unless
    --screen record;
  - correctness on fresh inputs of several distributions (the problem's own draw, uniform
    [0,1), negated, heavy-tailed), a scale-aware tolerance (atol x max(1, max |expected|) +
    rtol x |expected|) with NaN and inf parity, and the inputs checked unmodified;
  - timing by CUPTI across all streams (libkmcts_kb_timer.so) with an L2 flush before every
    call, candidate and reference in alternating blocks on rotated input sets redrawn in place
    before each block, until REFERENCE.md's stopping rule holds; median with a bootstrap CI;
  - every timed call's output checked, and kernels that ran outside the timing windows rejected.

Usage: python3 hardened.py --problem P.py --candidate C.py [--device 0|cpu] [--timer-lib SO]
          [--tolerance current|paper] [--correctness-trials 5] [--no-compile] [--screen reject|record]
Prints one JSON line on stdout (the same keys as faithful.py, plus screen, counters, rejected)."""

import argparse
import json
import math
import os
import sys
import time
import traceback

import kb_metrics
import screen
from faithful import SEED, device_of, load_module, set_seed

DISTRIBUTIONS = ("problem", "uniform", "negative", "heavy_tailed", "problem")
SLOT_BUDGET_BYTES = 2 << 30  # output slots per timed block, all input sets together
BLOCK = 25  # timed calls per input set per block


class Verdict(Exception):
    """Ends the evaluation with these keys in the result."""

    def __init__(self, **fields):
        super().__init__(fields.get("error") or fields.get("rejected") or "verdict")
        self.fields = fields


def draw_inputs(problem, seed, distribution, device):
    """The problem's inputs for `seed`, floating tensors reshaped to `distribution`, on device."""
    import torch
    set_seed(seed)
    if hasattr(torch.device, "__enter__"):  # torch >= 2: drawn on the device, not on the CPU
        with torch.device(device):
            values = problem.get_inputs()
    else:
        values = problem.get_inputs()
    values = [v.to(device) if isinstance(v, torch.Tensor) else v for v in values]
    g = torch.Generator(device=device).manual_seed(seed)
    out = []
    for v in values:
        if isinstance(v, torch.Tensor) and v.is_floating_point() and distribution != "problem":
            if distribution == "uniform":
                v = torch.rand(v.shape, generator=g, device=device, dtype=v.dtype)
            elif distribution == "negative":
                v = -v.abs() - torch.rand(v.shape, generator=g, device=device, dtype=v.dtype)
            elif distribution == "heavy_tailed":
                n = torch.randn(v.shape, generator=g, device=device, dtype=v.dtype)
                v = n * torch.exp(torch.randn(v.shape, generator=g, device=device, dtype=v.dtype))
        out.append(v.contiguous() if isinstance(v, torch.Tensor) else v)
    return out


def output_scale(expected):
    """max(1, max |expected| over its finite elements): the scale the absolute tolerance grows with."""
    import torch
    e = expected.float()
    finite = torch.isfinite(e)
    return max(1.0, float(e[finite].abs().max().item())) if bool(finite.any()) else 1.0


def mismatch(got, expected, tol, scale=None):
    """None when got matches expected under the scale-aware tolerance (|got - expected| <= atol x
    scale + rtol x |expected|, NaN where and only where the reference has NaN, infinities equal),
    else a description. One pass and one synchronisation in the common (passing) case."""
    import torch
    g, e = got.float(), expected.float()
    scale = output_scale(expected) if scale is None else scale
    ok = (g == e) | (torch.isnan(g) & torch.isnan(e)) | ((g - e).abs() <= tol["atol"] * scale + tol["rtol"] * e.abs())
    if bool(ok.all()):
        return None
    if not torch.equal(torch.isnan(g), torch.isnan(e)):
        return "NaN where the reference has none (or the reverse)"
    finite = torch.isfinite(e) & torch.isfinite(g)
    if not torch.equal(torch.isfinite(g), torch.isfinite(e)):
        return "inf where the reference has none (or the reverse)"
    diff = (g - e).abs()[finite]
    return (f"max |diff| {float(diff.max().item()):.3g} beyond atol {tol['atol']:g} x scale {scale:.3g} + rtol "
            f"{tol['rtol']:g} x |ref| ({int((~ok).sum().item())} elements)")


def modified(inputs, pristine):
    import torch
    for k, (a, b) in enumerate(zip(inputs, pristine)):
        if isinstance(a, torch.Tensor) and not torch.equal(a, b):
            return f"input {k} was modified by the candidate"
    return None


class Child:
    """The candidate's process and the pipe to it."""

    def __init__(self, args, init_inputs, call_timeout):
        import torch.multiprocessing as mp
        import candidate_worker
        ctx = mp.get_context("spawn")
        self.conn, child_conn = ctx.Pipe()
        self.timeout = call_timeout
        self.proc = ctx.Process(target=candidate_worker.run, daemon=True,
                                args=(child_conn, os.path.abspath(args.candidate), args.device, args.timer_lib,
                                      init_inputs, SEED))
        self.proc.start()
        child_conn.close()

    def ask(self, msg, timeout=None, stage=None):
        if msg is not None:
            self.conn.send(msg)
        limit = self.timeout if timeout is None else timeout
        if not self.conn.poll(limit):
            self.kill()
            raise Verdict(timeout=True, error=f"the candidate gave no answer within {limit:g} s ({stage or msg['op']})")
        try:
            reply = self.conn.recv()
        except (EOFError, ConnectionError):
            self.proc.join(5)
            code = self.proc.exitcode
            how = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
            raise Verdict(error=f"the candidate's process died ({how}) during {stage or msg['op']}")
        if "error" in reply and reply.get("wrong_output"):
            raise Verdict(correct=False, wrong_answer=reply["error"])
        if "error" in reply:
            raise Verdict(**reply)
        return reply

    def kill(self):
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(5)

    def close(self):
        try:
            self.conn.send({"op": "quit"})
        except (OSError, ValueError):
            pass
        self.proc.join(10)
        self.kill()


def check_correctness(problem, reference, child, device, trials, tol):
    import torch
    torch.manual_seed(SEED)
    seeds = [int(torch.randint(0, 2 ** 32 - 1, (1,)).item()) for _ in range(trials)]
    report = []
    with torch.no_grad():
        for k, seed in enumerate(seeds):
            dist = DISTRIBUTIONS[k % len(DISTRIBUTIONS)]
            inputs = draw_inputs(problem, seed, dist, device)
            pristine = [v.clone() if isinstance(v, torch.Tensor) else v for v in inputs]
            expected = reference(*inputs)
            slot = torch.full_like(expected, float("nan")) if expected.is_floating_point() else torch.empty_like(expected)
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
            if not trial["ok"]:
                break
    return seeds, report


class TimedSet:
    def __init__(self, problem, reference, seed, device, slots):
        import torch
        self.problem, self.reference, self.device = problem, reference, device
        self.inputs = draw_inputs(problem, seed, "problem", device)
        self.pristine = [v.clone() if isinstance(v, torch.Tensor) else v for v in self.inputs]
        self.expected = reference(*self.inputs)
        self.scale = output_scale(self.expected)
        self.slots = [torch.empty_like(self.expected) for _ in range(slots)]
        if device.type == "cpu":
            for s in self.slots:
                s.share_memory_()

    def redraw(self, seed):
        """New values in the same buffers: an output cached by input pointer goes stale."""
        import torch
        fresh = draw_inputs(self.problem, seed, "problem", self.device)
        for a, b, p in zip(self.inputs, fresh, self.pristine):
            if isinstance(a, torch.Tensor):
                a.copy_(b)
                p.copy_(b)
        self.expected = self.reference(*self.inputs)
        self.scale = output_scale(self.expected)
        for s in self.slots:
            s.fill_(float("nan")) if s.is_floating_point() else s.zero_()


def time_side(timer, model, sets, per_set):
    import torch
    times = []
    with torch.no_grad():
        for _ in range(per_set):
            for s in sets:
                timer.flush()
                sample, _ = timer.measure(lambda: model(*s.inputs))
                times.append(sample["union_ns"] * 1e-6)
    return times


def timing(args, problem, reference, child, device, timer, tol):
    import torch
    with torch.no_grad():
        return timing_loop(args, problem, reference, child, device, timer, tol)


def timing_loop(args, problem, reference, child, device, timer, tol):
    import torch
    probe = draw_inputs(problem, SEED, "problem", device)
    out_bytes = reference(*probe).element_size() * reference(*probe).numel()
    del probe
    per_set = max(1, min(BLOCK, SLOT_BUDGET_BYTES // max(1, 2 * out_bytes)))
    sets = [TimedSet(problem, reference, SEED + 1 + k, device, per_set) for k in range(2)]
    for k, s in enumerate(sets):
        child.ask({"op": "bind", "key": f"t{k}", "inputs": s.inputs, "slots": s.slots})
    sides = {"candidate": [], "eager": []}
    models = {"eager": reference}
    if args.compile and hasattr(torch, "compile"):  # torch < 2 has no torch.compile: not timed
        models["compile"] = torch.compile(reference)
        sides["compile"] = []
        with torch.no_grad():
            for _ in range(3):
                models["compile"](*sets[0].inputs)  # compiles outside the timing
    spent = {k: 0.0 for k in sides}
    counters = {"blocks": 0, "stray_kernels": 0, "own_kernels": 0, "kernels_per_call": set(), "streams_per_call": set()}
    block = 0
    while not all(kb_metrics.enough_samples(sides[k], spent[k], max_time_s=args.max_time_s) for k in sides):
        block += 1
        for k, s in enumerate(sets):
            s.redraw(SEED + 1000 * block + k)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        t0 = time.perf_counter()
        reply = child.ask({"op": "time", "keys": [f"t{k}" for k in range(len(sets))], "per_key": per_set},
                          timeout=args.call_timeout * per_set * len(sets))
        spent["candidate"] += time.perf_counter() - t0
        samples = reply["samples"]
        sides["candidate"] += [x["union_ns"] * 1e-6 for x in samples]
        strays = sum(x["stray_before"] + x["stray_after"] for x in samples) + reply["tail_stray"]
        counters["stray_kernels"] += strays
        counters["own_kernels"] += reply["own_kernels"]
        counters["kernels_per_call"].update(x["kernels"] for x in samples)
        counters["streams_per_call"].update(x["streams"] for x in samples)
        for k, s in enumerate(sets):
            for j, slot in enumerate(s.slots):
                bad = mismatch(slot, s.expected, tol, s.scale)
                if bad:
                    raise Verdict(correct=False, timed_failure=True,
                                  wrong_answer=f"timed call {j} of block {block} on input set {k}: {bad}")
            bad = modified(s.inputs, s.pristine)
            if bad:
                raise Verdict(correct=False, timed_failure=True, wrong_answer=f"during timing: {bad}")
        if counters["stray_kernels"] > counters["own_kernels"]:
            raise Verdict(rejected=f"{counters['stray_kernels'] - counters['own_kernels']} kernels ran outside the "
                                   "timed windows (work left running or launched late)")
        for k in sides:
            if k == "candidate":
                continue
            t0 = time.perf_counter()
            sides[k] += time_side(timer, models[k], sets, per_set)
            spent[k] += time.perf_counter() - t0
    counters["blocks"] = block
    counters["kernels_per_call"] = sorted(counters["kernels_per_call"])
    counters["streams_per_call"] = sorted(counters["streams_per_call"])
    return sides, counters


def evaluate(args):
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
    tol = out["tolerance"]
    from kb_timer import make_timer
    timer = make_timer(device, args.timer_lib)
    problem = load_module(args.problem, "kmcts_kb_problem")
    set_seed(SEED)
    init = problem.get_init_inputs()
    set_seed(SEED)
    reference = problem.Model(*[v.to(device) if isinstance(v, torch.Tensor) else v for v in init]).to(device)
    t0 = time.perf_counter()
    child = Child(args, init, args.call_timeout)
    try:
        try:
            child.ask(None, timeout=args.load_timeout, stage="load")
        except Verdict as v:
            if v.fields.get("stage") == "load" or v.fields.get("timeout"):
                v.fields["compiled"] = False
            raise
        seconds["load"] = time.perf_counter() - t0
        out["compiled"] = True
        t0 = time.perf_counter()
        out["correctness_seeds"], out["trials"] = check_correctness(problem, reference, child, device,
                                                                    args.correctness_trials, tol)
        seconds["correctness"] = time.perf_counter() - t0
        out["correct"] = all(t["ok"] for t in out["trials"])
        if not out["correct"]:
            return out
        t0 = time.perf_counter()
        sides, out["counters"] = timing(args, problem, reference, child, device, timer, tol)
        seconds["timing"] = time.perf_counter() - t0
    except Verdict as v:
        out.update(v.fields)
        out.setdefault("compiled", True)
        out.setdefault("correct", False)
        return out
    finally:
        out["seconds"] = seconds
        child.close()
    out["runtime_ms"] = {k: dict(kb_metrics.timing_stats(v), median=kb_metrics.median(v),
                                 rse=kb_metrics.median_rse(v), times_ms=v) for k, v in sides.items()}
    cand = sides["candidate"]
    out["speedup"] = {k: kb_metrics.median(sides[k]) / kb_metrics.median(cand) for k in sides if k != "candidate"}
    out["speedup_ci"] = {k: kb_metrics.bootstrap_speedup_ci(sides[k], cand) for k in sides if k != "candidate"}
    return out


def main():
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
    parser.add_argument("--load-timeout", type=float, default=600.0, help="seconds for the candidate to load (builds included)")
    parser.add_argument("--call-timeout", type=float, default=60.0, help="seconds per candidate call")
    parser.add_argument("--max-time-s", type=float, default=2.0, help="sampling time cap per side")
    args = parser.parse_args()
    started = time.perf_counter()
    try:
        result = evaluate(args)
    except Exception as e:  # the trusted side failed: an infrastructure error, not a verdict
        result = {"mode": "hardened", "infra_error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()[-4000:]}
    result["seconds_total"] = time.perf_counter() - started
    sys.stdout.write(json.dumps(result, default=lambda o: None if isinstance(o, float) and math.isnan(o) else str(o)) + "\n")
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
