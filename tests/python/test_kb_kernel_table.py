"""The KernelBench harness's per-kernel sums (issue 30, item 1; kernel_table.py): one sample's
rows as libkmcts_kb_timer gives them, summed over a side's timed calls; a candidate's table
checked as untrusted input (a bad one costs the profile, never the verdict); time_block's reply
carries the model calls' kernels and not the copies into the slots. The rows themselves need a
GPU (bench/llm/session.sh kb records them there)."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "hardware", "kernelbench", "harness"))
import kernel_table  # noqa: E402

try:
    import torch  # noqa: F401
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False


def row(name, calls=1, ns=1000, grid=(1, 1, 1), block=(256, 1, 1), registers=32):
    return {"name": name, "grid": list(grid), "block": list(block), "registers": registers, "smem_static": 0,
            "smem_dynamic": 0, "local_bytes": 0, "calls": calls, "ns": ns}


class Sums(unittest.TestCase):
    def test_launches_summed_by_name_and_geometry(self):
        t = kernel_table.KernelTable()
        t.add([row("gemm", ns=900), row("bias", ns=100)])
        t.add([row("gemm", ns=1100), row("gemm", grid=(2, 1, 1), ns=50)])
        rows = {(r["name"], tuple(r["grid"])): (r["calls"], r["ns"]) for r in t.to_json()}
        self.assertEqual(rows, {("gemm", (1, 1, 1)): (2, 2000), ("bias", (1, 1, 1)): (1, 100),
                                ("gemm", (2, 1, 1)): (1, 50)})
        self.assertEqual(t.samples, 2)

    def test_bounded_like_the_cpp_table(self):
        t = kernel_table.KernelTable()
        for i in range(4):
            t.add([row(f"k{i * 50 + j}") for j in range(50)])
        self.assertEqual(len(t.rows), kernel_table.MAX_ROWS)
        other = [r for r in t.to_json() if r["name"] == "(other)"]
        self.assertEqual(other[0]["calls"], 200 - 63)
        again = kernel_table.KernelTable()
        again.add(t.to_json())  # what one side sends, the other reads back whole
        self.assertEqual(again.rows, t.rows)

    def test_untrusted_tables_are_refused_whole(self):
        for bad in ("rows", [row("k")] * 65, [dict(row("k"), calls=-1)], [dict(row("k"), name="x" * 600)],
                    [dict(row("k"), grid=[1, 1])], [dict(row("k"), ns=1.5)], [dict(row("k"), registers=True)],
                    [{"name": "k"}]):
            t = kernel_table.KernelTable()
            t.add_reply([row("fine")], 1)
            t.add_reply(bad, 1)
            self.assertIsNotNone(t.error, bad if not isinstance(bad, list) else bad[:1])
            t.add_reply([row("later")], 1)  # nothing after a refusal is summed either
            self.assertEqual(set(k[0] for k in t.rows), {"fine"})

    def test_the_report(self):
        cand, ref = kernel_table.KernelTable(), kernel_table.KernelTable()
        self.assertIsNone(kernel_table.tables_report(cand, ref))  # no kernels (the CPU stand-in)
        cand.add([row("mine")], 1)
        ref.add([row("at::native::vectorized_elementwise_kernel")], 1)
        report = kernel_table.tables_report(cand, ref)
        self.assertEqual(report["samples_candidate"], 1)
        self.assertEqual(report["reference"][0]["name"], "at::native::vectorized_elementwise_kernel")
        cand.add_reply("junk", 1)
        self.assertEqual(kernel_table.tables_report(cand, ref), {"error": "a kernel table that is not a list of at most 64 rows"})


@unittest.skipUnless(HAVE_TORCH, "no torch")
class TimeBlock(unittest.TestCase):
    def test_the_reply_sums_the_model_calls_only(self):
        import candidate_worker

        class Timer:
            """Each window's table names what ran in it: the model's kernel, or the copy into the slot."""
            def __init__(self):
                self.last = []

            def flush(self):
                pass

            def measure(self, fn):
                out = fn()
                names = fn.__code__.co_freevars + fn.__code__.co_names
                self.last = ([row("model_kernel", ns=700)] if "model" in names
                             else [row("copy", ns=5)] if "store" in names else [])
                return {"union_ns": 1, "window_ns": 1, "stray_before": 0, "stray_after": 0}, out

            def kernel_table(self):
                return self.last

        def model(x):
            return x * 2

        timer = Timer()
        instances = candidate_worker.Instances([model])
        bound = {key: ([torch.ones(2)], [torch.empty(2)]) for key in ("a", "b", "c")}
        reply = candidate_worker.time_block(instances, timer, bound, ["a", "b", "c"], torch.device("cpu"))
        self.assertEqual(reply["kernel_table"], [row("model_kernel", calls=3, ns=2100)])


if __name__ == "__main__":
    unittest.main()
