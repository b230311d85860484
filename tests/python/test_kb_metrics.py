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



class HardenedStatistics(unittest.TestCase):
    def test_median_and_its_relative_standard_error(self):
        self.assertEqual(kb_metrics.median([3.0, 1.0, 2.0]), 2.0)
        self.assertEqual(kb_metrics.median([4.0, 1.0, 2.0, 3.0]), 2.5)
        self.assertEqual(kb_metrics.median_rse([1.0, 1.0]), math.inf)
        # 100 values 1..100: ranks 50 -+ 9.8 -> [40, 60] (0-based indices 40 and 60: 41 and 61)
        values = [float(v) for v in range(1, 101)]
        self.assertAlmostEqual(kb_metrics.median_rse(values), (61 - 41) / (2 * 1.96) / 50.5)

    def test_stopping_rule(self):
        steady = [0.1] * 19
        self.assertFalse(kb_metrics.enough_samples(steady, 0.0))            # fewer than 20
        self.assertFalse(kb_metrics.enough_samples(steady + [0.1], 0.0))    # 2 ms < 50 ms of GPU time
        self.assertTrue(kb_metrics.enough_samples([0.1] * 500, 0.0))        # 50 ms, RSE 0
        self.assertTrue(kb_metrics.enough_samples([0.1] * 20, 2.0))         # the 2 s cap
        self.assertFalse(kb_metrics.enough_samples([0.005] * 1500, 0.0))    # sub-10-us: 7.5 ms < 100 ms
        self.assertFalse(kb_metrics.enough_samples([0.02] * 2000, 0.0, max_samples=5000))  # 40 ms of 20 us
        self.assertTrue(kb_metrics.enough_samples([0.02] * 2500, 0.0, max_samples=5000))   # 50 ms
        self.assertTrue(kb_metrics.enough_samples([0.005] * 2000, 0.0))     # the sample cap

    def test_bootstrap_interval_is_seeded_and_contains_the_ratio(self):
        ref = [2.0 + 0.01 * (k % 7) for k in range(200)]
        cand = [1.0 + 0.01 * (k % 5) for k in range(200)]
        ci = kb_metrics.bootstrap_speedup_ci(ref, cand)
        self.assertEqual(ci, kb_metrics.bootstrap_speedup_ci(ref, cand))
        ratio = kb_metrics.median(ref) / kb_metrics.median(cand)
        self.assertLessEqual(ci[0], ratio)
        self.assertGreaterEqual(ci[1], ratio)
        self.assertIsNone(kb_metrics.bootstrap_speedup_ci([], cand))

    def test_harness_verdicts(self):
        v = kb_metrics.harness_verdict
        self.assertEqual(v({"infra_error": "x"}), "infra_error")
        self.assertEqual(v({"compiled": False}), "compile_error")
        self.assertEqual(v({"compiled": False, "timeout": True}), "timeout")
        self.assertEqual(v({"compiled": True, "rejected": "static screen"}), "rejected")
        self.assertEqual(v({"compiled": True, "wrong_answer": "timed call"}), "wrong_answer")
        self.assertEqual(v({"compiled": True, "error": "RuntimeError"}), "crash")
        self.assertEqual(v({"compiled": True, "correct": False}), "wrong_answer")
        self.assertEqual(v({"compiled": True, "correct": True}), "ok")

if __name__ == "__main__":
    unittest.main()
