"""The hardened KernelBench harness (hardware/kernelbench/harness/hardened.py) on the CPU with
Debian's python3-torch: the candidate in its own process, correctness over several input
distributions, inputs checked unmodified, every timed output checked with inputs redrawn in
place, the static screen as a verdict, and the cheat corpus of problems/kernelbench-format/cheats
(each file says what it must get: "expect: VERDICT [text]"). Skipped without torch."""

import json
import os
import re
import subprocess
import sys
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
HARNESS = os.path.join(ROOT, "hardware", "kernelbench", "harness", "hardened.py")
sys.path.insert(0, os.path.dirname(HARNESS))
from kb_metrics import harness_verdict as verdict  # noqa: E402
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "kernelbench")
PROBLEM = os.path.join(FIXTURES, "small_scale_bias.py")  # the same Model as level1/4_scale_bias.py
CHEATS = os.path.join(ROOT, "problems", "kernelbench-format", "cheats", "4_scale_bias")

try:
    import torch  # noqa: F401
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False


def evaluate(candidate, *extra):
    """One evaluation; the eager side in the trusted process unless `extra` says otherwise (one
    process fewer per evaluation: the cheat corpus alone is a dozen)."""
    if "--eager-process" not in extra:
        extra = ("--eager-process", "harness", *extra)
    run = subprocess.run([sys.executable, HARNESS, "--problem", PROBLEM, "--candidate", candidate, "--device", "cpu",
                          "--no-compile", "--max-time-s", "0.2", *extra],
                         capture_output=True, text=True, timeout=300, check=False)
    lines = run.stdout.strip().splitlines()
    if not lines:
        raise AssertionError(f"no result from the harness (exit {run.returncode}): {run.stderr[-2000:]}")
    return json.loads(lines[-1])


def message(result):
    failed = [t.get("error", "") for t in result.get("trials", []) if not t.get("ok")]
    return " ".join([result.get("rejected", ""), result.get("wrong_answer", ""), result.get("error") or ""] + failed)


@unittest.skipUnless(HAVE_TORCH, "no torch")
class Hardened(unittest.TestCase):
    def test_correct_candidate_is_timed_by_medians_with_an_interval(self):
        r = evaluate(os.path.join(FIXTURES, "small_correct.py"))
        self.assertEqual(verdict(r), "ok", message(r))
        self.assertEqual(r["score"], "median")
        self.assertEqual([t["distribution"] for t in r["trials"]],
                         ["problem", "uniform", "negative", "heavy_tailed", "problem"])
        lo, hi = r["speedup_ci"]["eager"]
        self.assertLessEqual(lo, r["speedup"]["eager"])
        self.assertGreaterEqual(hi, r["speedup"]["eager"])
        self.assertGreaterEqual(r["runtime_ms"]["candidate"]["n"], 20)
        self.assertEqual(r["screen"]["verdict"], "clean")

    def test_failures_of_the_candidate_process(self):
        self.assertEqual(verdict(evaluate(os.path.join(FIXTURES, "small_wrong.py"))), "wrong_answer")
        raised = evaluate(os.path.join(FIXTURES, "small_raises.py"))
        self.assertEqual(verdict(raised), "crash")
        self.assertIn("illegal memory access", raised["error"])
        self.assertEqual(verdict(evaluate(os.path.join(FIXTURES, "small_no_model.py"))), "compile_error")

    def test_screen_record_mode_runs_a_flagged_candidate(self):
        r = evaluate(os.path.join(CHEATS, "try_fallback.py"), "--screen", "record")
        self.assertEqual(r["screen"]["verdict"], "flagged")
        self.assertNotEqual(verdict(r), "rejected", message(r))

    def test_reported_times_too_short_for_the_block_walls_are_rejected(self):
        # The screen only records: the candidate's process reports its calls 20 times shorter
        # than they ran (reporting_patch.py wraps its time_block), and the trusted side's walls
        # of its blocks give it away.
        r = evaluate(os.path.join(CHEATS, "reporting_patch.py"), "--screen", "record")
        self.assertEqual(verdict(r), "rejected", message(r))
        self.assertIn("timing_bound", r["rejected"])
        # An honest candidate stays far inside the bound, and its record says by how much.
        ok = evaluate(os.path.join(FIXTURES, "small_correct.py"))
        self.assertEqual(verdict(ok), "ok", message(ok))
        bound = ok["counters"]["timing_bound"]
        self.assertLess(bound["unaccounted_ms"], bound["allowed_ms"])
        self.assertGreater(bound["candidate_calls"], 0)

    def test_reported_work_too_short_for_its_own_windows_is_rejected(self):
        # union_patch.py shrinks only the time it reports as its work, leaving each window
        # honest: the walls cannot see it, the time inside the windows can.
        r = evaluate(os.path.join(CHEATS, "union_patch.py"), "--screen", "record")
        self.assertEqual(verdict(r), "rejected", message(r))
        self.assertIn("timing_bound", r["rejected"])
        self.assertIn("off the timed work", r["rejected"])
        import hardened
        bound = {"candidate_wall_ms": 100.0, "candidate_windows_ms": 90.0, "candidate_unions_ms": 89.0,
                 "candidate_calls": 16, "outside_per_call_ms": 0.1, "slack_per_call_ms": 0.2, "gap_per_call_ms": 0.05}
        hardened.timing_bound(bound, 1)
        self.assertAlmostEqual(bound["gap_ms"], 1.0)
        with self.assertRaises(hardened.Verdict):
            hardened.timing_bound(dict(bound, candidate_unions_ms=10.0), 1)

    def test_the_bound_records_the_trusted_gpu_span(self):
        # On a GPU the trusted side also spans each block with a CUDA event pair of its own
        # (timing_bound.GpuSpan); the span lies inside the wall span, so the rule stays the wall's
        # and the GPU's unaccounted time is recorded beside it. None on the CPU.
        import hardened
        bound = {"candidate_wall_ms": 100.0, "candidate_windows_ms": 90.0, "candidate_calls": 16,
                 "outside_per_call_ms": 0.1, "slack_per_call_ms": 0.2}
        hardened.timing_bound(bound, 1)
        self.assertNotIn("unaccounted_gpu_ms", bound)
        with_gpu = dict(bound, candidate_gpu_ms=97.0)
        hardened.timing_bound(with_gpu, 1)
        self.assertAlmostEqual(with_gpu["unaccounted_gpu_ms"], 7.0)
        with self.assertRaises(hardened.Verdict) as caught:
            hardened.timing_bound(dict(bound, candidate_windows_ms=20.0, candidate_gpu_ms=99.0), 1)
        self.assertIn("of wall time", caught.exception.fields["rejected"])
        self.assertIsNone(hardened.GpuSpan(torch.device("cpu")).end())

    def test_eager_timed_in_a_process_of_the_candidates_kind(self):
        # --eager-process child: the reference's Model runs in a fresh worker process, timed by
        # the same block code on the same shared inputs, its outputs checked against the
        # reference's; the verdicts stay the candidate's.
        r = evaluate(os.path.join(FIXTURES, "small_correct.py"), "--eager-process", "child")
        self.assertEqual(verdict(r), "ok", message(r))
        self.assertIn("eager_load", r["seconds"])
        self.assertGreaterEqual(r["runtime_ms"]["eager"]["n"], 20)
        lo, hi = r["speedup_ci"]["eager"]
        self.assertLessEqual(lo, r["speedup"]["eager"])
        self.assertGreaterEqual(hi, r["speedup"]["eager"])
        self.assertEqual(verdict(evaluate(os.path.join(FIXTURES, "small_wrong.py"), "--eager-process", "child")),
                         "wrong_answer")
        harness = evaluate(os.path.join(FIXTURES, "small_correct.py"), "--eager-process", "harness")
        self.assertNotIn("eager_load", harness["seconds"])
        self.assertEqual(harness["instances"], {"asked": 1, "candidate": 1})  # one build on the CPU

    def test_timed_calls_rotate_over_builds_of_the_model_on_both_sides(self):
        r = evaluate(os.path.join(FIXTURES, "small_correct.py"), "--eager-process", "child", "--instances", "3")
        self.assertEqual(verdict(r), "ok", message(r))
        self.assertEqual(r["instances"], {"asked": 3, "candidate": 3, "eager": 3})
        raised = evaluate(os.path.join(FIXTURES, "small_init_raises.py"), "--instances", "3")
        self.assertEqual(raised.get("stage"), "init", message(raised))
        self.assertIn("ValueError: no weights for you", raised["error"])

    def test_library_use_is_a_note_and_the_cpu_attributes_nothing(self):
        r = evaluate(os.path.join(CHEATS, "library_call.py"))
        self.assertEqual(r["screen"]["verdict"], "clean")
        self.assertEqual({n["rule"] for n in r["screen"]["notes"]}, {"library_compute"})
        self.assertEqual(verdict(r), "ok", message(r))  # a matmul by diag(scale) is correct
        self.assertFalse(r["attribution"]["available"])
        self.assertEqual(r["attribution"]["error"], "no GPU")

    def test_every_planted_cheat_gets_its_verdict(self):
        names = sorted(f for f in os.listdir(CHEATS) if f.endswith(".py"))
        self.assertGreaterEqual(len(names), 12)
        for name in names:
            with self.subTest(cheat=name):
                with open(os.path.join(CHEATS, name), encoding="utf-8") as f:
                    m = re.search(r"expect: (\w+)(?: (.+))?", f.read())  # expect-gpu: is for a GPU
                self.assertIsNotNone(m, f"{name} says nothing of what it must get")
                r = evaluate(os.path.join(CHEATS, name))
                self.assertEqual(verdict(r), m.group(1), message(r))
                if m.group(2):
                    self.assertIn(m.group(2).strip(), message(r))


# The guard library (libkmcts_kb_guard.so) lies in the build folder, beside where the timer
# library would (ctest says where: tests/CMakeLists.txt).
BUILD = os.environ.get("KMCTS_BUILD_DIR", "")
HOSTILE = os.path.join(ROOT, "tests", "fixtures", "hostile")


def planted_probe(folder, mark):
    """kb_guard_probe.py with its words replaced (tests/fixtures/hostile)."""
    with open(os.path.join(HOSTILE, "kb_guard_probe.py"), encoding="utf-8") as f:
        text = f.read().replace("HOSTILE_MARK", str(mark))
    text = text.replace("HOSTILE_CORRECT", os.path.join(FIXTURES, "small_correct.py"))
    path = os.path.join(folder, "probe.py")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def marked_processes(mark):
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if str(mark).encode() in f.read().split(b"\0"):
                    found.append(int(entry))
        except (OSError, ValueError):
            pass
    return found


def state(pid):
    with open(f"/proc/{pid}/stat", "rb") as f:
        stat = f.read()
    return stat[stat.rindex(b")") + 2:].split()[0].decode()


@unittest.skipUnless(HAVE_TORCH, "no torch")
class Guard(unittest.TestCase):
    """The candidate's process shares the harness's uid and view; the guard it takes before any
    candidate code runs (kb_guard.h) keeps it from writing the harness's /tmp (torch.compile's
    cache), signalling the harness, starting a session or giving up its subreaper, and what it
    starts in a process group of its own is still stopped and killed with it."""

    def setUp(self):
        import tempfile
        self.assertTrue(os.path.exists(os.path.join(BUILD, "libkmcts_kb_guard.so")),
                        f"no guard library in KMCTS_BUILD_DIR='{BUILD}'")
        self.work = tempfile.mkdtemp()
        self.mark = 700000 + os.getpid()
        self.probe = planted_probe(self.work, self.mark)
        self.planted = ["/tmp/kmcts-guard-planted-%d" % self.mark]
        import getpass
        self.planted.append(f"/tmp/torchinductor_{getpass.getuser()}/planted-{self.mark}")

    def tearDown(self):
        import shutil
        for pid in marked_processes(self.mark):
            os.kill(pid, 9)
        for path in self.planted:
            if os.path.exists(path):
                os.unlink(path)
        shutil.rmtree(self.work, ignore_errors=True)

    def test_guarded_the_probe_gets_nothing_out(self):
        r = evaluate(self.probe, "--screen", "record", "--timer-lib", os.path.join(BUILD, "libkmcts_kb_timer.so"))
        self.assertEqual(verdict(r), "ok", message(r))
        self.assertIn("writes only beneath its folders", r["candidate_guard"])
        self.assertIn("seccomp: no setsid, no CLONE_PARENT, subreaper kept", r["candidate_guard"])
        if "ABI " in r["candidate_guard"] and int(r["candidate_guard"].split("ABI ")[1].split(":")[0]) >= 6:
            self.assertIn("signals within its domain", r["candidate_guard"])
        self.assertEqual([p for p in self.planted if os.path.exists(p)], [])
        self.assertEqual(marked_processes(self.mark), [], "its daemon outlived the evaluation")

    def test_unguarded_the_probe_escapes(self):
        # The same probe with no guard library to be found: each attack works, so the probe
        # shows what the guard stops.
        r = evaluate(self.probe, "--screen", "record", "--timer-lib", os.path.join(self.work, "libkmcts_kb_timer.so"))
        self.assertEqual(verdict(r), "compile_error", message(r))  # it raised as it was imported
        for what in ("wrote /tmp/kmcts-guard-planted", "may signal the harness", "a child became a session leader",
                     "gave up the subreaper", "made a child of the harness"):
            self.assertIn(what, r["error"])

    def test_a_daemon_in_its_own_group_is_stopped_and_killed_with_the_candidate(self):
        import torch  # noqa: F401
        from candidate_process import Child
        from faithful import load_module
        problem = load_module(PROBLEM, "kmcts_kb_guard_problem")
        child = Child("cpu", os.path.join(BUILD, "libkmcts_kb_timer.so"))
        try:
            child.load(self.probe, problem.get_init_inputs(), {})
            child.ask(None, timeout=120, stage="load")
            import time
            deadline = time.monotonic() + 30
            while not marked_processes(self.mark) and time.monotonic() < deadline:
                time.sleep(0.05)  # started, but not yet exec'd into its own command line
            daemons = marked_processes(self.mark)
            self.assertEqual(len(daemons), 1)
            while os.getpgid(daemons[0]) == child.proc.pid and time.monotonic() < deadline:
                time.sleep(0.05)  # its Python starts, then leaves the group
            self.assertNotEqual(os.getpgid(daemons[0]), child.proc.pid, "the daemon is not in a group of its own")
            child.pause(True)
            self.assertEqual(state(daemons[0]), "T")
            child.pause(False)
            self.assertNotEqual(state(daemons[0]), "T")
        finally:
            child.close()
        self.assertEqual(marked_processes(self.mark), [])


@unittest.skipUnless(HAVE_TORCH, "no torch")
class Rotation(unittest.TestCase):
    def test_time_block_calls_the_builds_in_turn(self):
        import torch
        import candidate_worker

        class Timer:
            def flush(self):
                pass

            def measure(self, fn):
                out = fn()
                return {"union_ns": 1, "window_ns": 1, "stray_before": 0, "stray_after": 0}, out

            def kernel_table(self):
                return []

        called = []

        def build(k):
            return lambda x: (called.append(k), x * 2)[1]

        instances = candidate_worker.Instances([build(0), build(1), build(2)])
        bound = {key: ([torch.ones(2)], [torch.empty(2)]) for key in ("a", "b")}
        for _ in range(3):
            candidate_worker.time_block(instances, Timer(), bound, ["a", "b"], torch.device("cpu"))
        self.assertEqual(called, [0, 1, 2, 0, 1, 2])
        self.assertTrue(torch.equal(bound["b"][1][0], torch.full((2,), 2.0)))


SERVE = os.path.join(os.path.dirname(HARNESS), "serve.py")


def serve(mode, candidates, *extra):
    """serve.py with one request per candidate (a string is sent as the raw line); its replies."""
    lines = []
    for c in candidates:
        argv = ["--problem", PROBLEM, "--candidate", c, "--device", "cpu", "--no-compile", *extra]
        argv += ["--max-time-s", "0.2"] if mode == "hardened" else ["--trials", "5"]
        lines.append(c[1:] if c.startswith("!") else json.dumps({"argv": argv, "env": {"KMCTS_TEST": "1"}}))
    run = subprocess.run([sys.executable, SERVE, "--mode", mode, "--device", "cpu"], input="\n".join(lines) + "\n",
                         capture_output=True, text=True, timeout=300, check=False)
    return [json.loads(line) for line in run.stdout.strip().splitlines()]


@unittest.skipUnless(HAVE_TORCH, "no torch")
class Warm(unittest.TestCase):
    def test_hardened_serves_candidates_in_turn_until_a_fault(self):
        correct, wrong = os.path.join(FIXTURES, "small_correct.py"), os.path.join(FIXTURES, "small_wrong.py")
        replies = serve("hardened", [correct, wrong, correct, "!not a request"])
        self.assertEqual([verdict(r) for r in replies[:3]], ["ok", "wrong_answer", "ok"], [message(r) for r in replies])
        self.assertEqual([r["served"] for r in replies[:3]], [1, 2, 3])
        self.assertEqual([r["retire"] for r in replies], [False, False, False, True])
        self.assertIn("malformed request", replies[3]["infra_error"])
        for r in replies[:3]:  # a fresh candidate process each time, loaded and judged as a one-shot run
            self.assertIn("load", r["seconds"])
        for key in ("timing_redraw", "timing_candidate", "timing_checks", "timing_references"):
            self.assertIn(key, replies[0]["seconds"])

    def test_hardened_serves_with_the_eager_process_started_ahead(self):
        correct = os.path.join(FIXTURES, "small_correct.py")
        replies = serve("hardened", [correct, correct], "--eager-process", "child")
        self.assertEqual([verdict(r) for r in replies], ["ok", "ok"], [message(r) for r in replies])
        self.assertTrue(all("eager_load" in r["seconds"] for r in replies))

    def test_faithful_serves_one_candidate(self):
        correct = os.path.join(FIXTURES, "small_correct.py")
        replies = serve("faithful", [correct, correct])
        self.assertEqual(len(replies), 1)  # the process ends after its one candidate
        self.assertEqual(verdict(replies[0]), "ok", message(replies[0]))
        self.assertTrue(replies[0]["retire"])


class TrustedMemory(unittest.TestCase):
    """What a warm harness holds on the GPU between evaluations (run M: a candidate ran out of
    memory while the harness still held the previous evaluation's shared tensors). The GPU path
    itself runs in bench/security/kb_guard.sh; here, what can be checked without one."""

    def test_pool_allocated_counts_only_that_pools_segments(self):
        import hardened
        snapshot = [{"segment_pool_id": (0, 0), "allocated_size": 5 << 30},  # the default pool
                    {"segment_pool_id": (1, 3), "allocated_size": 6 << 30},  # the evaluation's shared pool
                    {"segment_pool_id": (1, 3), "allocated_size": 0},
                    {"segment_pool_id": (1, 4), "allocated_size": 1 << 20},
                    {"allocated_size": 7}]  # a torch that does not name pools: never counted
        self.assertEqual(hardened.pool_allocated(snapshot, (1, 3)), 6 << 30)
        self.assertEqual(hardened.pool_allocated(snapshot, [1, 4]), 1 << 20)
        self.assertEqual(hardened.pool_allocated([], (1, 3)), 0)

    def test_settling_on_the_cpu_lets_go_of_the_pool_and_keeps_the_harness(self):
        import serve as served
        from candidate_process import Warm as Kept
        warm, result = Kept(), {"mode": "hardened"}
        warm.shared_pool = object()
        self.assertTrue(served.settle("cpu", warm, result))
        self.assertIsNone(warm.shared_pool)
        self.assertNotIn("harness_gpu_memory_gib", result)

    def test_the_note_on_unreleased_tensors_gives_their_size(self):
        import serve as served
        self.assertTrue(served.unreleased_note(30 << 30).startswith("30.00 GiB of tensors shared with the candidate's"))
        self.assertTrue(served.unreleased_note(16384).startswith("0.0156 MiB of tensors shared"))  # run N's killed candidate
        self.assertTrue(served.unreleased_note(16384).endswith("the harness retires"))

    @unittest.skipUnless(HAVE_TORCH, "no torch")
    def test_an_infra_error_keeps_what_the_trusted_side_held(self):
        import argparse
        import hardened
        figures = {"peak_allocated": 36.0, "peak_reserved": 67.5}
        saved = hardened.evaluate, hardened.gpu_memory
        try:
            def out_of_memory(*_):
                raise RuntimeError("CUDA out of memory. Tried to allocate 6.00 GiB")
            hardened.evaluate = out_of_memory
            hardened.gpu_memory = lambda device: figures if device == "0" else None
            line = json.loads(hardened.evaluate_line(argparse.Namespace(device="0")))
        finally:
            hardened.evaluate, hardened.gpu_memory = saved
        self.assertIn("out of memory", line["infra_error"])
        self.assertEqual(line["harness_gpu_memory_gib"], figures)


if __name__ == "__main__":
    unittest.main()
