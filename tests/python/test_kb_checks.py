"""The hardened harness's input draws and output checks (hardware/kernelbench/harness/kb_checks.py)
as they bound their memory: the distributions drawn in place give the very values of the plain
formulas, the problem's own tensors are left alone, and an output checked a piece at a time
gets the verdict and the message of a check in one piece. Skipped without torch."""

import os
import sys
import unittest

from harness_paths import HARNESS, HAVE_TORCH

sys.path.insert(0, HARNESS)

if HAVE_TORCH:
    import torch
    import kb_checks as hardened  # the module hardened.py takes them from


class Problem:
    """A problem module's stand-in: get_inputs() as KernelBench's files have it."""

    def __init__(self, make):
        self.get_inputs = make


def plain_draw(problem, seed, distribution):
    """The distributions as plain formulas (what draw_inputs computed before it worked in place)."""
    hardened.set_seed(seed)
    values = problem.get_inputs()
    g = torch.Generator(device="cpu").manual_seed(seed)
    out = []
    for v in values:
        if isinstance(v, torch.Tensor) and v.is_floating_point() and distribution != "problem":
            if distribution == "uniform":
                v = torch.rand(v.shape, generator=g, dtype=v.dtype)
            elif distribution == "negative":
                v = -v.abs() - torch.rand(v.shape, generator=g, dtype=v.dtype)
            elif distribution == "heavy_tailed":
                n = torch.randn(v.shape, generator=g, dtype=v.dtype)
                v = n * torch.exp(torch.randn(v.shape, generator=g, dtype=v.dtype))
        out.append(v)
    return out


@unittest.skipUnless(HAVE_TORCH, "torch is not installed")
class Draws(unittest.TestCase):
    def test_in_place_draws_equal_the_plain_formulas(self):
        problem = Problem(lambda: [torch.randn(33, 17), torch.randint(0, 9, (5,)), 3, torch.rand(4, 4, dtype=torch.float64)])
        for dist in ("problem", "uniform", "negative", "heavy_tailed"):
            for seed in (1, 42, 2 ** 31 + 5):
                got = hardened.draw_inputs(problem, seed, dist, torch.device("cpu"))
                want = plain_draw(problem, seed, dist)
                self.assertEqual(len(got), len(want))
                for a, b in zip(got, want):
                    if isinstance(b, torch.Tensor):
                        self.assertTrue(torch.equal(a, b), f"{dist}, seed {seed}")
                        self.assertTrue(a.is_contiguous())
                    else:
                        self.assertEqual(a, b)

    def test_a_tensor_the_problem_keeps_is_not_changed(self):
        kept = torch.randn(64)
        original = kept.clone()
        problem = Problem(lambda: [kept])
        for dist in ("uniform", "negative", "heavy_tailed"):
            drawn = hardened.draw_inputs(problem, 7, dist, torch.device("cpu"))
            self.assertTrue(torch.equal(kept, original), dist)
            self.assertFalse(torch.equal(drawn[0], original), dist)

    def test_unknown_distribution_is_an_error(self):
        with self.assertRaises(ValueError):
            hardened.draw_inputs(Problem(lambda: [torch.ones(3)]), 1, "bimodal", torch.device("cpu"))


@unittest.skipUnless(HAVE_TORCH, "torch is not installed")
class Checks(unittest.TestCase):
    TOL = {"atol": 1e-2, "rtol": 1e-2}

    def both(self, got, expected, scale=None):
        """mismatch() in one piece and in pieces of 7 elements: they must agree."""
        whole = hardened.mismatch(got, expected, self.TOL, scale)
        saved = hardened.CHECK_CHUNK
        hardened.CHECK_CHUNK = 7
        try:
            pieces = hardened.mismatch(got, expected, self.TOL, scale)
            scale_pieces = hardened.output_scale(expected)
        finally:
            hardened.CHECK_CHUNK = saved
        self.assertEqual(whole, pieces)
        self.assertAlmostEqual(hardened.output_scale(expected), scale_pieces, places=5)
        return whole

    def test_pass_and_fail_agree_in_pieces(self):
        torch.manual_seed(0)
        e = torch.randn(10, 13) * 5
        self.assertIsNone(self.both(e.clone(), e))
        self.assertIsNone(self.both(e + 1e-4, e))
        bad = e.clone()
        bad[3, 4] += 7.0
        bad[9, 12] -= 2.5
        message = self.both(bad, e)
        self.assertIn("(2 elements)", message)
        self.assertIn("max |diff| 7", message)

    def test_nan_and_inf_parity_in_a_later_piece(self):
        e = torch.ones(50)
        e[45] = float("nan")
        got = torch.ones(50)
        self.assertEqual(self.both(got, e), "NaN where the reference has none (or the reverse)")
        got[45] = float("nan")
        self.assertIsNone(self.both(got, e))
        e2, g2 = torch.ones(50), torch.ones(50)
        e2[40] = float("inf")
        g2[40] = 1.0
        self.assertEqual(self.both(g2, e2), "inf where the reference has none (or the reverse)")
        g2[40] = float("-inf")  # rtol x inf once let any value, an infinity of either sign, pass
        self.assertEqual(self.both(g2, e2), "inf of the other sign where the reference has inf")
        g2[40] = float("inf")
        self.assertIsNone(self.both(g2, e2))

    def test_scale_ignores_non_finite_elements_and_odd_shapes(self):
        e = torch.full((30,), 10.0)
        e[0] = float("inf")
        self.assertAlmostEqual(hardened.output_scale(e), 10.0, places=4)
        self.assertEqual(hardened.output_scale(torch.full((5,), float("nan"))), 1.0)
        self.assertIsNone(self.both(torch.empty(0, 3), torch.empty(0, 3)))
        self.assertIsNone(self.both(torch.tensor(2.0), torch.tensor(2.0)))
        h = torch.randn(40, dtype=torch.float16)
        self.assertIsNone(self.both(h.clone(), h))
        self.assertIsNotNone(self.both(h + 1, h))
        strided = torch.randn(12, 10).t()  # not contiguous: reshaped, not viewed
        self.assertIsNone(self.both(strided.contiguous(), strided))


if __name__ == "__main__":
    unittest.main()
