"""harness/one_call.py on the CPU (Debian's python3-torch; skipped where torch is missing): the
one call that ncu and compute-sanitizer watch (evaluator.kernelbench.profile, and the diagnosis of
a fault) builds the candidate as the evaluation does, calls it, and reports a failure as its JSON
line instead of raising; the candidate's prints never reach stdout, where the line is read."""

import json
import os
import subprocess
import sys
import unittest

from harness_paths import FIXTURES, HARNESS, HAVE_TORCH


def one_call(candidate):
    out = subprocess.run([sys.executable, os.path.join(HARNESS, "one_call.py"), "--problem",
                          os.path.join(FIXTURES, "small_scale_bias.py"), "--candidate", os.path.join(FIXTURES, candidate),
                          "--device", "cpu"], capture_output=True, text=True, timeout=300)
    lines = out.stdout.strip().splitlines()
    return lines, out.stderr, out.returncode


@unittest.skipUnless(HAVE_TORCH, "torch is not installed")
class OneCallOnCpu(unittest.TestCase):
    def test_a_correct_candidate_is_called(self):
        lines, _, code = one_call("small_correct.py")
        self.assertEqual(code, 0)
        self.assertEqual(lines, ['{"ok": true}'])

    def test_a_raising_candidate_is_reported_with_its_stage(self):
        lines, _, code = one_call("small_raises.py")
        self.assertEqual(code, 0)
        self.assertEqual(len(lines), 1)
        r = json.loads(lines[0])
        self.assertFalse(r["ok"])
        self.assertEqual(r["stage"], "warm-up call")
        self.assertIn("Error", r["error"])

    def test_a_candidate_whose_init_raises_is_reported_at_init(self):
        r = json.loads(one_call("small_init_raises.py")[0][-1])
        self.assertEqual(r["stage"], "init")

    def test_prints_of_the_candidate_go_to_stderr(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "printer.py")
            with open(os.path.join(FIXTURES, "small_correct.py")) as src, open(path, "w") as f:
                f.write(src.read())
                f.write('\nprint("{\\"ok\\": false, \\"forged\\": true}")\n')
            lines, err, _ = one_call(path)
        self.assertEqual(lines, ['{"ok": true}'])
        self.assertIn("forged", err)


if __name__ == "__main__":
    unittest.main()
