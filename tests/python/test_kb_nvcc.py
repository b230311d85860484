"""The nvcc wrapper of KernelBench extension builds (hardware/kernelbench/harness/kb_nvcc.py), with
the real nvcc (skipped where there is none, as in CI) and stand-in torch headers: a CUDA source
as load_inline writes it (torch/types.h first) whose own code names nothing of torch is compiled
without that include; one that names torch, or whose copy does not build, is compiled as
written; nvcc's messages keep the source's own lines."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

WRAPPER = os.path.join(os.path.dirname(__file__), "..", "..", "hardware", "kernelbench", "harness", "kb_nvcc.py")
PREFIX = "#include <torch/types.h>\n#include <cuda.h>\n#include <cuda_runtime.h>\n"

KERNEL = """
__global__ void twice(float* y, long n) {  // a torch-like word in a comment: torch::Tensor
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) y[i] *= 2.f;
}
extern "C" void twice_launch(float* y, long n, cudaStream_t s) { twice<<<(n + 255) / 256, 256, 0, s>>>(y, n); }
"""


def nvcc():
    home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    found = shutil.which("nvcc") or os.path.join(home, "bin", "nvcc")
    return found if os.path.exists(found) else None


@unittest.skipIf(nvcc() is None, "no nvcc")
class Wrapper(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="kb-nvcc-")
        # A torch/types.h that refuses to be compiled unless the source asks for what it holds:
        # compiling it at all shows which file nvcc was given.
        os.makedirs(os.path.join(self.dir, "include", "torch"))
        with open(os.path.join(self.dir, "include", "torch", "types.h"), "w") as f:
            f.write("#pragma once\n#ifndef WANT_HELPER\n#error the torch header was parsed\n#endif\n"
                    "inline int stand_in_helper() { return 7; }\n")
        self.env = dict(os.environ, KMCTS_REAL_NVCC=nvcc())

    def tearDown(self):
        shutil.rmtree(self.dir)

    def build(self, body, *flags):
        source = os.path.join(self.dir, "cuda.cu")
        with open(source, "w") as f:
            f.write(PREFIX + body)
        return subprocess.run([sys.executable, WRAPPER, "-I", os.path.join(self.dir, "include"), *flags, "-c", source,
                               "-o", os.path.join(self.dir, "cuda.o")], env=self.env, capture_output=True, text=True)

    def test_a_torch_free_source_is_compiled_without_the_torch_include(self):
        run = self.build(KERNEL)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertNotIn("torch header was parsed", run.stderr)
        self.assertTrue(os.path.exists(os.path.join(self.dir, "cuda.o")))

    def test_a_source_that_names_torch_is_compiled_as_written(self):
        run = self.build(KERNEL + "namespace k = torch;\n")
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("torch header was parsed", run.stderr)
        self.assertNotIn("did not build without", run.stderr)

    def test_a_copy_that_does_not_build_falls_back_to_the_source(self):
        # It names nothing of torch, but needs what the header brought: the copy fails, the
        # source as written builds (with the flag the stand-in header wants).
        run = self.build(KERNEL + "int uses_helper() { return stand_in_helper(); }\n", "-DWANT_HELPER")
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("did not build without torch/types.h", run.stderr)

    def test_an_error_of_the_code_itself_is_reported_from_the_copy(self):
        # A type error no header can mend (as in tests/fixtures/llm_replies/kb_cuda_coder_broken.md):
        # one compile, the torch header never parsed, the message on the source's own line.
        body = KERNEL + "__global__ void bad(float4* y) { y[0] = 2.f * y[0]; }\n"
        run = self.build(body)
        self.assertNotEqual(run.returncode, 0)
        self.assertIn('no operator "*" matches these operands', run.stderr)
        self.assertNotIn("did not build without", run.stderr)
        self.assertNotIn("torch header was parsed", run.stderr)
        self.assertIn(f"cuda.cu({len((PREFIX + body).splitlines())})", run.stderr)

    def test_messages_point_at_the_source_lines(self):
        run = self.build(KERNEL + "__global__ void idle() { int unused; }\n")
        self.assertEqual(run.returncode, 0, run.stderr)
        # The warning names the source as written and its line there (after the prefix's three).
        line = len((PREFIX + KERNEL).splitlines()) + 1
        self.assertIn(f"cuda.cu({line})", run.stderr)
        self.assertNotIn("torch-free", run.stderr)

if __name__ == "__main__":
    unittest.main()
