"""Where the KernelBench harness and its test fixtures are, and whether torch is importable (the
tests that need it are skipped without it), for the tests of this folder."""

import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
HARNESS = os.path.join(ROOT, "hardware", "kernelbench", "harness")
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "kernelbench")

try:
    import torch  # noqa: F401
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False
