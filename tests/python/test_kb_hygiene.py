"""The rules of the KernelBench problem-hygiene check (hardware/kernelbench/harness/hygiene_rules.py)."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "hardware", "kernelbench", "harness"))
import hygiene_rules  # noqa: E402

SOUND = {"rerun_max_abs_diff": 0.0, "zero_max_abs_diff": 4.2, "zero_allclose": False,
         "input_change_max_abs": 7.9, "output_scale": 4.2}


def names(m):
    return [f["finding"] for f in hygiene_rules.findings(m, 1e-4, 1e-4)]


class Findings(unittest.TestCase):
    def test_a_sound_problem_has_none(self):
        self.assertEqual(names(SOUND), [])

    def test_stochastic_reference(self):
        self.assertEqual(names(dict(SOUND, rerun_max_abs_diff=1.5)), ["stochastic_reference"])

    def test_zero_output_passes(self):
        m = dict(SOUND, zero_allclose=True, zero_max_abs_diff=4e-6, output_scale=4e-6, input_change_max_abs=8e-6)
        self.assertEqual(names(m), ["zero_output_passes"])

    def test_input_insensitive(self):
        self.assertEqual(names(dict(SOUND, output_scale=0.5, input_change_max_abs=1e-4)), ["input_insensitive"])
        self.assertEqual(names(dict(SOUND, output_scale=0.0, input_change_max_abs=0.0, zero_allclose=True)),
                         ["zero_output_passes", "input_insensitive"])

    def test_details_name_the_numbers(self):
        (f,) = hygiene_rules.findings(dict(SOUND, rerun_max_abs_diff=1.5), 1e-4, 1e-4)
        self.assertIn("1.5", f["detail"])


if __name__ == "__main__":
    unittest.main()
