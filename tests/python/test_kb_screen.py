"""Static screening of KernelBench candidates (hardware/kernelbench/harness/screen.py): each
rule on a small planted source, and clean sources stay clean."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "hardware", "kernelbench", "harness"))
import screen  # noqa: E402

HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
CLEAN = HEADER + '''
from torch.utils.cpp_extension import load_inline
_src = r"""
__global__ void k(const float* x, float* y, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i]; }
"""
class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        return y.view(x.shape)
'''


def rules(source):
    return sorted({f["rule"] for f in screen.screen_source(source)["findings"]})


def notes(source):
    return sorted({f["rule"] for f in screen.screen_source(source)["notes"]})


class Screen(unittest.TestCase):
    def test_clean_candidate(self):
        self.assertEqual(screen.screen_source(CLEAN), {"verdict": "clean", "findings": [], "notes": []})

    def test_library_compute_is_a_note_not_a_flag(self):
        # The runtime attribution judges library use: the screen only notes it.
        for src in (HEADER + "def f(a, b):\n    return torch.matmul(a, b)\n",
                    HEADER + "def f(x):\n    return F.softmax(x, dim=1)\n",
                    HEADER + "class M(nn.Module):\n    def __init__(s):\n        s.l = nn.Linear(4, 4)\n",
                    's = r"""' + "x" * 50 + ' cublasSgemm(h, a, b) """\n'):
            self.assertEqual(notes(src), ["library_compute"], src)
            self.assertEqual(rules(src), [], src)
            self.assertEqual(screen.screen_source(src)["verdict"], "clean", src)

    def test_parameter_holder_modules_pass(self):
        # A LayerNorm (or Linear, Conv2d) kept only for its weight and bias, initialised as the
        # reference's: an honest KernelBench pattern.
        src = HEADER + ("class ModelNew(nn.Module):\n    def __init__(self, shape):\n        super().__init__()\n"
                        "        self.ln = nn.LayerNorm(shape)\n        self.fc = nn.Linear(4, 4)\n"
                        "    def forward(self, x):\n        return ext.layernorm(x, self.ln.weight, self.ln.bias)\n")
        self.assertEqual(screen.screen_source(src)["verdict"], "clean")
        self.assertEqual(len(screen.screen_source(src)["notes"]), 2)

    def test_own_function_named_like_an_op_is_not_library_compute(self):
        self.assertEqual(notes("def softmax(x):\n    return x\n\ny = softmax(3)\n"), [])

    def test_try_fallback(self):
        src = HEADER + "def f(x):\n    try:\n        return ext.run(x)\n    except Exception:\n        return torch.relu(x)\n"
        self.assertEqual(rules(src), ["try_fallback"])
        logging_only = "def f(x):\n    try:\n        return g(x)\n    except Exception:\n        print('failed')\n        raise\n"
        self.assertEqual(rules(logging_only), [])

    def test_streams(self):
        self.assertEqual(rules(HEADER + "s = torch.cuda.Stream()\n"), ["streams"])
        self.assertEqual(rules('s = """' + "x" * 50 + ' cudaStream_t side; cudaStreamCreate(&side); """\n'), ["streams"])

    def test_threads(self):
        self.assertEqual(rules("import threading\n"), ["threads"])
        self.assertEqual(rules("from concurrent.futures import ThreadPoolExecutor\n"), ["threads"])
        self.assertEqual(rules('s = """' + "x" * 50 + ' std::thread t([]{}); """\n'), ["threads"])

    def test_monkey_patching(self):
        self.assertEqual(rules(HEADER + "torch.allclose = lambda *a, **k: True\n"), ["monkey_patching"])
        self.assertEqual(rules(HEADER + "setattr(torch, 'allclose', None)\n"), ["monkey_patching"])
        self.assertEqual(rules("class A:\n    def f(self):\n        self.x = 1\n"), [])  # own attributes are fine

    def test_frame_introspection(self):
        self.assertEqual(rules("import sys\nf = sys._getframe(1)\n"), ["frame_introspection"])
        self.assertEqual(rules("import inspect\n"), ["frame_introspection"])
        self.assertEqual(rules("def f(fr):\n    return fr.f_back.f_locals\n"), ["frame_introspection"])

    def test_timer_patching(self):
        self.assertEqual(rules(HEADER + "torch.cuda.Event.elapsed_time = lambda s, e: 0.001\n"), ["timer_patching"])
        self.assertEqual(rules("import time\ntime.perf_counter = lambda: 0.0\n"), ["timer_patching"])

    def test_findings_carry_lines_and_unparsable_source_is_reported(self):
        (f,) = screen.screen_source("import threading\n")["findings"]
        self.assertEqual(f["line"], 1)
        self.assertEqual(screen.screen_source("def (:\n")["verdict"], "unparsable")



class ProcessEscape(unittest.TestCase):
    def test_ways_out_of_the_evaluating_process(self):
        for src in ("import os\nos.fstat(3)\n", "import socket\n", "import ctypes\n", "x = __import__('o' + 's')\n",
                    "getattr(torch, 'c' + 'uda')\n", "import sys\nm = sys.modules['kb_timer']\n", "exec('1')\n",
                    "import os\nos.write(5, b'x')\n"):
            with self.subTest(src=src):
                self.assertIn("process_escape", rules(src))

    def test_files_written_moved_or_removed(self):
        for src in ("f = open('kb_metrics.py', 'a')\n", "open(p, mode='w').write('x')\n", "open(p, m)\n",
                    "import os\nos.remove('x')\n", "import os\nos.replace('a', 'b')\n", "import shutil\n",
                    "from pathlib import Path\nPath('h.py').write_text('x')\n", "p.unlink()\n"):
            with self.subTest(src=src):
                self.assertIn("filesystem_write", rules(src))

    def test_reading_files_and_string_replace_are_not_writes(self):
        self.assertEqual(rules("src = open('k.cu').read()\nt = open('k.cu', 'rb')\ncode = src.replace('A', 'B')\n"), [])

    def test_ordinary_code_is_not_an_escape(self):
        self.assertEqual(rules("import os\np = os.path.join('a', 'b')\ngetattr(self, 'weight')\n"), [])

if __name__ == "__main__":
    unittest.main()
