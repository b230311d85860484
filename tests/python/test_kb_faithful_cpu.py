"""The faithful harness's protocol logic on the CPU (Debian's python3-torch; skipped where torch
is missing): seeds, correctness trials, verdicts and the JSON line, on small fixtures. Timing on
the CPU is a stand-in; the GPU protocol is checked on the GPU machine (bench/kernelbench)."""

import json
import os
import subprocess
import sys
import unittest

from harness_paths import FIXTURES, HARNESS, HAVE_TORCH, ROOT


def faithful(candidate, *extra):
    out = subprocess.run([sys.executable, os.path.join(HARNESS, "faithful.py"), "--problem",
                          os.path.join(FIXTURES, "small_scale_bias.py"), "--candidate", os.path.join(FIXTURES, candidate),
                          "--device", "cpu", "--trials", "3", "--no-compile", *extra],
                         capture_output=True, text=True, timeout=300)
    return json.loads(out.stdout.strip().splitlines()[-1])


@unittest.skipUnless(HAVE_TORCH, "torch is not installed")
class FaithfulOnCpu(unittest.TestCase):
    def test_correct_candidate_with_parameters_is_timed_against_eager(self):
        r = faithful("small_correct.py")
        self.assertTrue(r["compiled"])
        self.assertTrue(r["correct"], r)
        self.assertEqual(len(r["trials"]), 5)
        self.assertEqual(r["tolerance"]["atol"], 1e-4)
        self.assertEqual(len(r["runtime_ms"]["candidate"]["times_ms"]), 3)
        self.assertIn("eager", r["speedup"])
        self.assertEqual(r["excessive_speedup"], r["speedup"]["eager"] > 10)  # upstream's flag, its threshold
        self.assertNotIn("compile", r["runtime_ms"])

    def test_trial_seeds_are_the_official_ones(self):
        import torch
        torch.manual_seed(42)
        expected = [int(torch.randint(0, 2 ** 32 - 1, (1,)).item()) for _ in range(5)]
        self.assertEqual([t["seed"] for t in faithful("small_correct.py")["trials"]], expected)

    def test_wrong_candidate_stops_at_its_first_failing_trial(self):
        r = faithful("small_wrong.py", "--tolerance", "paper")
        self.assertTrue(r["compiled"])
        self.assertFalse(r["correct"])
        self.assertEqual(len(r["trials"]), 1)
        self.assertGreater(r["trials"][0]["max_abs_diff"], 0.01)
        self.assertEqual(r["tolerance"]["generation"], "paper")
        self.assertNotIn("runtime_ms", r)

    def test_raising_and_unloadable_candidates(self):
        r = faithful("small_raises.py")
        self.assertTrue(r["compiled"])
        self.assertIn("illegal memory access", r["error"])
        r = faithful("small_no_model.py")
        self.assertFalse(r["compiled"])
        self.assertIn("ModelNew", r["error"])

    def test_hygiene_flags_the_vacuous_problems_only(self):
        problems = os.path.join(ROOT, "problems", "kernelbench-format")
        files = [os.path.join(problems, "hygiene", f) for f in ("stochastic.py", "tiny_output.py", "mean_of_many.py")]
        files.append(os.path.join(FIXTURES, "small_scale_bias.py"))
        out = subprocess.run([sys.executable, os.path.join(HARNESS, "hygiene.py"), "--device", "cpu", *files],
                             capture_output=True, text=True, timeout=300)
        found = [[f["finding"] for f in json.loads(line)["findings"]] for line in out.stdout.strip().splitlines()]
        self.assertEqual(found, [["stochastic_reference"], ["zero_output_passes"], ["input_insensitive"], []])


if __name__ == "__main__":
    unittest.main()
