"""The torch-free parts of the KernelBench harness (hardware/kernelbench/harness/kb_metrics.py):
tolerances by generation, timing statistics and the leaderboard metrics, on fixed samples."""

import math
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "hardware", "kernelbench", "harness"))
import kb_metrics  # noqa: E402


class Tolerance(unittest.TestCase):
    def test_generations(self):
        self.assertEqual(kb_metrics.tolerance("current"), {"generation": "current", "atol": 1e-4, "rtol": 1e-4})
        self.assertEqual(kb_metrics.tolerance("paper")["atol"], 1e-2)

    def test_unknown_generation_names_the_known_ones(self):
        with self.assertRaisesRegex(ValueError, "unknown tolerance generation 'v0'.*current"):
            kb_metrics.tolerance("v0")


class Timing(unittest.TestCase):
    def test_stats(self):
        s = kb_metrics.timing_stats([1.0, 2.0, 3.0, 4.0])
        self.assertAlmostEqual(s["mean"], 2.5)
        self.assertAlmostEqual(s["std"], math.sqrt(5 / 3))  # sample standard deviation
        self.assertEqual((s["min"], s["max"], s["n"]), (1.0, 4.0, 4))

    def test_no_timings_is_an_error(self):
        with self.assertRaises(ValueError):
            kb_metrics.timing_stats([])

    def test_speedup(self):
        self.assertAlmostEqual(kb_metrics.speedup(3.0, 1.5), 2.0)
        self.assertIsNone(kb_metrics.speedup(None, 1.0))


class Leaderboard(unittest.TestCase):
    RESULTS = [
        {"correct": True, "speedup": 2.5},
        {"correct": True, "speedup": 1.2},
        {"correct": True, "speedup": 0.6},
        {"correct": False, "speedup": 9.0},  # fast but wrong: never counts
        {"correct": False, "speedup": None},  # missing
    ]

    def test_fast_p_counts_missing_and_wrong_as_not_fast(self):
        self.assertAlmostEqual(kb_metrics.fast_p(self.RESULTS, 0.0), 3 / 5)
        self.assertAlmostEqual(kb_metrics.fast_p(self.RESULTS, 1.0), 2 / 5)
        self.assertAlmostEqual(kb_metrics.fast_p(self.RESULTS, 2.0), 1 / 5)
        self.assertAlmostEqual(kb_metrics.fast_p(self.RESULTS, 2.5), 0.0)  # strictly greater
        self.assertEqual(kb_metrics.fast_p([], 1.0), 0.0)

    def test_geomean_over_correct_only(self):
        self.assertAlmostEqual(kb_metrics.geomean_speedup(self.RESULTS), (2.5 * 1.2 * 0.6) ** (1 / 3))
        self.assertIsNone(kb_metrics.geomean_speedup([{"correct": False, "speedup": 3.0}]))

    def test_leaderboard(self):
        board = kb_metrics.leaderboard(self.RESULTS)
        self.assertEqual(board["problems"], 5)
        self.assertEqual(board["correct"], 3)
        self.assertEqual(set(board["fast_p"]), {"0.0", "0.5", "0.8", "1.0", "1.5", "2.0"})


if __name__ == "__main__":
    unittest.main()
