"""The hardened harness's judgement of what ran (hardened.py's Owners and library_verdict):
the timed calls' kernels summed by owner, the own-kernel share, and each library policy's
verdict, on samples as the candidate's process reports them (attribution itself needs a GPU:
bench/kernelbench/attribution_check.sh runs it there)."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "hardware", "kernelbench", "harness"))
import candidate_process  # noqa: E402
import hardened  # noqa: E402


def sample(own=(0, 0), library=(0, 0), unknown=(0, 0), objects=None, attributed=1):
    """own, library, unknown: (kernels, ns)."""
    x = {f: 0 for f in candidate_process.SAMPLE_FIELDS}
    x.update(own_kernels=own[0], own_ns=own[1], library_kernels=library[0], library_ns=library[1],
             unknown_kernels=unknown[0], unknown_ns=unknown[1], attributed=attributed, kernels=own[0] + library[0])
    if objects:
        x["library_objects"] = objects
    return x


def report(*samples):
    owners = hardened.Owners()
    owners.add(list(samples))
    return owners.report()


class Attribution(unittest.TestCase):
    def test_share_and_objects_are_summed_over_the_samples(self):
        r = report(sample(own=(2, 3000), library=(1, 1000), objects={"libcublasLt.so.13": [1, 1000]}),
                   sample(own=(2, 3000), library=(1, 1000), objects={"libcublasLt.so.13": [1, 1000]}))
        self.assertTrue(r["available"])
        self.assertAlmostEqual(r["own_share"], 0.75)
        self.assertEqual(r["kernels"], {"own": 4, "library": 2, "unknown": 0})
        self.assertEqual(r["library_objects"]["libcublasLt.so.13"]["kernels"], 2)
        self.assertAlmostEqual(r["library_ms"], 0.002)

    def test_unknown_kernels_count_as_not_its_own(self):
        r = report(sample(own=(1, 100), unknown=(1, 900)))
        self.assertAlmostEqual(r["own_share"], 0.1)
        self.assertAlmostEqual(r["unknown_ms"], 0.0009)
        self.assertIn("1 whose launch was not seen", hardened.library_verdict(r, "all", 0.5))
        only_unknown = report(sample(unknown=(2, 900)))
        self.assertIn("no kernel of its own ran", hardened.library_verdict(only_unknown, "report", 0.5))

    def test_unavailable_attribution_cannot_pass_a_strict_policy(self):
        r = report(sample(own=(1, 100)), sample(attributed=0))
        self.assertFalse(r["available"])
        self.assertIsNone(hardened.library_verdict(r, "report", 0.5))  # recorded as unavailable
        for policy in ("limit", "all"):
            with self.assertRaises(RuntimeError):  # an infra_error, not a pass
                hardened.library_verdict(r, policy, 0.5)
        cpu = hardened.Owners()
        cpu.add([sample(attributed=0)])
        self.assertIsNone(hardened.library_verdict(cpu.report("no GPU"), "all", 0.5))  # nothing to attribute

    def test_no_kernel_of_its_own_is_rejected_by_every_policy_but_record(self):
        r = report(sample(library=(3, 900), objects={"libtorch_cuda.so": [3, 900]}))
        for policy in ("report", "limit", "all"):
            why = hardened.library_verdict(r, policy, 0.5)
            self.assertIn("no kernel of its own ran", why)
            self.assertIn("libtorch_cuda.so 3", why)
        self.assertIsNone(hardened.library_verdict(r, "record", 0.5))  # the seed

    def test_policies_on_a_partial_replacement(self):
        # a fused epilogue of its own after a cuBLAS matmul: 30% own
        r = report(sample(own=(1, 300), library=(1, 700), objects={"libcublasLt.so.13": [1, 700]}))
        self.assertIsNone(hardened.library_verdict(r, "report", 0.5))
        self.assertIn("70.0% of its kernel time is in library kernels", hardened.library_verdict(r, "limit", 0.5))
        self.assertIsNone(hardened.library_verdict(r, "limit", 0.8))
        self.assertIn("every op must be its own", hardened.library_verdict(r, "all", 0.5))
        own_only = report(sample(own=(2, 500)))
        self.assertIsNone(hardened.library_verdict(own_only, "all", 0.0))

    def test_malformed_library_objects_are_a_malformed_reply(self):
        good = {"samples": [sample(objects={"libx.so": [1, 2]})], "copy_kernels": 0, "tail_stray": 0}
        self.assertEqual(len(candidate_process.checked_samples(good, 1)), 1)
        lying = dict(sample(own=(1, 10)), kernels=5)  # owners that do not add up to the kernels
        with self.assertRaises(candidate_process.Verdict):
            candidate_process.checked_samples({"samples": [lying], "copy_kernels": 0, "tail_stray": 0}, 1)
        with self.assertRaises(candidate_process.Verdict):
            candidate_process.checked_samples({"samples": [dict(sample(), attributed=2)], "copy_kernels": 0,
                                               "tail_stray": 0}, 1)
        for bad in ({"libx.so": [1]}, {"libx.so": ["1", 2]}, {"libx.so": [-1, 2]}, ["libx.so"],
                    {f"lib{k}.so": [1, 1] for k in range(100)}):
            reply = {"samples": [dict(sample(), library_objects=bad)], "copy_kernels": 0, "tail_stray": 0}
            with self.assertRaises(candidate_process.Verdict):
                candidate_process.checked_samples(reply, 1)


if __name__ == "__main__":
    unittest.main()
