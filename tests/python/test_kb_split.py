"""The split of a CUDA source that includes torch (hardware/kernelbench/harness/kb_split.py) and
its build by kb_nvcc.py. Without a compiler: what goes to the kernels' unit and what to the host
unit, for the corpus of tests/fixtures/kernelbench/split (written after the shapes KernelBench
candidates take: a plain kernel, AT_DISPATCH over a kernel template, anonymous namespaces, static
kernels, an extern "C" launcher, a template with a non-type parameter) and the sources it must
decline (a kernel that names torch, a device variable the host code names); each fixture's
`// expect:` line is checked against the splitter. With nvcc (skipped where there is none, as in
CI) and stand-in torch headers: kb_nvcc.py builds the split object (the host function, the
kernel's stub, the launch through cudaLaunchKernel, a depfile naming the source as written),
and falls back to the whole source when a unit does not build. Running the split build on a GPU,
bit for bit against the whole one, is bench/kernelbench/split_check.py (H200 figures in
bench/results/kernelbench-builds.md)."""

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
HARNESS = os.path.join(HERE, "..", "..", "hardware", "kernelbench", "harness")
FIXTURES = os.path.join(HERE, "..", "fixtures", "kernelbench", "split")
sys.path.insert(0, HARNESS)
import kb_split  # noqa: E402

PREFIX = "#include <torch/types.h>\n#include <cuda.h>\n#include <cuda_runtime.h>\n"


def fixture(name):
    with open(os.path.join(FIXTURES, name + ".cu")) as f:
        return PREFIX + f.read()


def code_of(text):
    """Text without comments, for assertions about code."""
    return kb_split.masked(text)


class Corpus(unittest.TestCase):
    def test_every_fixture_is_split_or_declined_as_its_expect_line_says(self):
        files = sorted(glob.glob(os.path.join(FIXTURES, "*.cu")))
        self.assertGreaterEqual(len(files), 6)
        for path in files:
            text = fixture(os.path.splitext(os.path.basename(path))[0])
            expect = re.search(r"^// expect: (.*)$", text, re.M).group(1)
            with self.subTest(path=os.path.basename(path)):
                if expect == "split":
                    parts = kb_split.split(text)
                    self.assertNotRegex(kb_split.SCALAR_TYPES.sub(" ", code_of(parts.device)), kb_split.TORCH_NAMES)
                    # Both units keep the source's lines, so messages point at the right one.
                    self.assertEqual(parts.device.count("\n"), text.count("\n"))
                    self.assertEqual(parts.host.count("\n"), text.count("\n"))
                else:
                    reason = re.match(r"whole \((.*)\)", expect).group(1)
                    with self.assertRaises(kb_split.Decline) as caught:
                        kb_split.split(text)
                    self.assertIn(reason, str(caught.exception))


class Units(unittest.TestCase):
    def test_a_plain_kernel_goes_to_nvcc_and_its_launch_to_the_host(self):
        parts = kb_split.split(fixture("relu_plain"))
        device, host = code_of(parts.device), code_of(parts.host)
        self.assertIn("if (idx < size) out[idx] = fmaxf(in[idx], 0.f);", device)
        self.assertNotIn("torch::Tensor run", device)
        self.assertNotIn("#include <torch", device)
        self.assertIn("::kmcts_split::launch(relu_kernel, num_blocks, block_size)(x.data_ptr<float>()", host)
        self.assertNotIn("<<<", host)
        self.assertRegex(host, r"relu_kernel\(const float\* __restrict__ in, float\* __restrict__ out, int size\);")
        self.assertNotIn("fmaxf", host)  # the kernel's body stays with nvcc
        self.assertEqual(parts.kernels, ["relu_kernel"])
        self.assertEqual(parts.kernel_templates, [])

    def test_a_dispatched_kernel_template_is_declared_and_its_macros_stay_on_the_host(self):
        parts = kb_split.split(fixture("dispatch_template"))
        device, host = code_of(parts.device), code_of(parts.host)
        self.assertEqual(parts.kernel_templates, ["affine_kernel"])
        self.assertNotIn("CHECK_INPUT", device)  # a macro that names torch
        self.assertIn("#define CHECK_INPUT", host)
        self.assertIn("__host__ __device__ inline long ceil_div", device)
        self.assertIn("__host__ __device__ inline long ceil_div(long a, long b) { return", host)  # inline: both define it
        self.assertIn("::kmcts_split::launch(affine_kernel<scalar_t>, ceil_div(n, 256), 256, 64, stream)(", host)
        self.assertIn("extern __shared__", device)
        self.assertNotIn("extern __shared__", host)

    def test_namespaces_static_kernels_and_launchers(self):
        parts = kb_split.split(fixture("namespaces"))
        device, host = code_of(parts.device), code_of(parts.host)
        # The anonymous namespace gets a name in both units (the host unit must reach its kernel)
        # and is used, so unqualified names still find what it holds.
        for unit in (device, host):
            self.assertIn("namespace kmcts_anonymous_1 {", unit)
            self.assertIn("using namespace kmcts_anonymous_1;", unit)
        self.assertNotRegex(device, r"static\s+__global__")
        self.assertNotRegex(host, r"static\s+__global__")
        self.assertIn("__forceinline__ float apply", device)
        self.assertNotIn("apply(", host)  # a device function: nothing of it on the host
        # The torch-free launcher is defined by nvcc and declared for the host.
        self.assertIn("affine<<<(n + 127) / 128, 128, 0, stream>>>(x, y, n, f);", device)
        self.assertRegex(host, r"void launch_affine\(const float\* x, float\* y, int n, cudaStream_t stream\);")
        self.assertIn("::kmcts_split::launch(kern::copy, (n + 255) / 256, 256)(", host)
        self.assertEqual(sorted(parts.kernels), ["kern::copy", "kmcts_anonymous_1::affine"])
        self.assertIn("struct Affine {", device)
        self.assertIn("struct Affine {", host)

    def test_comments_and_literals_are_not_code(self):
        text = PREFIX + (
            '// torch::Tensor in a comment; k<<<1, 1>>>() too\n'
            '/* a brace { in a block comment */\n'
            '__global__ void k(char* out) { const char* s = "}{ torch:: <<<"; out[0] = s[0]; int big = 1\'000\'000; '
            "out[1] = (char)big; }\n"
            'torch::Tensor run(torch::Tensor x) { k<<<1, 1>>>((char*)x.data_ptr()); return x; }\n')
        parts = kb_split.split(text)
        self.assertIn('"}{ torch:: <<<"', parts.device)
        self.assertEqual(parts.kernels, ["k"])
        self.assertIn("::kmcts_split::launch(k, 1, 1)((char*)x.data_ptr())", parts.host)

    def test_what_it_declines(self):
        cases = {
            "a kernel or device function that names torch": "__global__ void k(at::Half* x) { TORCH_CHECK(x); }\n",
            "the host code names the device variable table": (
                "__device__ float table[4];\n__global__ void k(float* y) { y[0] = table[0]; }\n"
                "torch::Tensor run(torch::Tensor x) { float* p; cudaGetSymbolAddress((void**)&p, table); "
                "k<<<1, 1>>>(p); return x; }\n"),
            "no kernel": "torch::Tensor run(torch::Tensor x) { return x; }\n",
            "an unbalanced '{'": "__global__ void k(float* y) { y[0] = 1;\n",
            "a launch of something other than a named kernel": (
                "__global__ void k() {}\ntorch::Tensor run(torch::Tensor x) { auto f = k; (f)<<<1, 1>>>(); return x; }\n"),
        }
        for reason, body in cases.items():
            with self.subTest(reason=reason), self.assertRaises(kb_split.Decline) as caught:
                kb_split.split(PREFIX + body)
            self.assertIn(reason, str(caught.exception))

    def test_a_kernel_over_half_gets_the_scalar_types_headers_and_no_more(self):
        parts = kb_split.split(fixture("half_kernel"))
        self.assertTrue(parts.scalar_types)
        unit = kb_split.device_unit(parts, "cuda.cu")
        self.assertTrue(unit.startswith(kb_split.SCALAR_HEADERS))
        self.assertNotIn("#include <torch", unit)
        plain = kb_split.split(fixture("relu_plain"))
        self.assertFalse(plain.scalar_types)
        self.assertNotIn("c10/util", kb_split.device_unit(plain, "cuda.cu"))

    def test_what_a_review_found_would_change_behaviour_is_declined(self):
        kernel = "__global__ void k(float* y) { y[0] = 1; }\n"
        cases = {
            # each unit would hold its own copy of the state
            "a static variable both units would hold a copy of": "static int g_block = 128;\n" + kernel +
            "torch::Tensor run(torch::Tensor x) { g_block = 1; k<<<1, g_block>>>(x.data_ptr<float>()); return x; }\n",
            "a static variable in a host function both units would define": kernel +
            "static cudaStream_t side() { static cudaStream_t s = nullptr; return s; }\n"
            "extern \"C\" void go(float* y) { k<<<1, 1, 0, side()>>>(y); }\n"
            "torch::Tensor run(torch::Tensor x) { go(x.data_ptr<float>()); return x; }\n",
            # nvcc's host pass defines __CUDACC__; the host compiler does not
            "asks whether nvcc compiles it": "#ifdef __CUDACC__\nconstexpr int kBlock = 256;\n#else\n"
            "constexpr int kBlock = 1;\n#endif\n" + kernel +
            "torch::Tensor run(torch::Tensor x) { k<<<1, kBlock>>>(x.data_ptr<float>()); return x; }\n",
            "a directive inside a host function": "torch::Tensor run(torch::Tensor x) {\n#define SCALE 2\n"
            "  k<<<1, 1>>>(x.data_ptr<float>()); return x; }\n__global__ void k2(float* y) { y[0] = SCALE; }\n" + kernel,
        }
        for reason, body in cases.items():
            with self.subTest(reason=reason):
                with self.assertRaises(kb_split.Decline) as caught:
                    kb_split.split(PREFIX + body)
                self.assertIn(reason, str(caught.exception))

    def test_statics_in_a_kernel_body_and_the_lines_of_a_launch_are_kept(self):
        text = PREFIX + ("template <typename T, int B = 256>\n"
                         "static __global__ void k(T* y) { static __shared__ T cache[B]; cache[0] = y[0]; y[0] = cache[0]; }\n"
                         "torch::Tensor run(torch::Tensor x) {\n  k<float>\n      <<<1, 1>>>(x.data_ptr<float>());\n"
                         "  return x;\n}\n")
        parts = kb_split.split(text)
        self.assertIn("static __shared__ T cache[B];", parts.device)
        self.assertNotRegex(parts.device, r"static\s+__global__")
        self.assertEqual(parts.kernel_templates, ["k"])
        self.assertEqual(parts.host.count("\n"), text.count("\n"))
        self.assertIn("return x;", parts.host.splitlines()[text.splitlines().index("  return x;")])

    def test_instantiations_are_the_kernel_templates_the_host_unit_needs(self):
        parts = kb_split.split(fixture("dispatch_template"))
        undefined = ["void affine_kernel<float>(float const*, float*, long, float, float)",
                     "cudaLaunchKernel", "at::Tensor::data_ptr<float>() const",
                     "void affine_kernel<double>(double const*, double*, long, double, double)"]
        self.assertEqual(kb_split.instantiations(parts, undefined), sorted(undefined[i] for i in (0, 3)))
        unit = kb_split.device_unit(parts, "cuda.cu", kb_split.instantiations(parts, undefined))
        self.assertIn("template __global__ void affine_kernel<float>(float const*, float*, long, float, float);", unit)
        self.assertNotIn("c10/util/Half.h", unit)
        # AT_DISPATCH_..._AND_HALF instantiates the template over c10::Half: its header comes too.
        half = ["void affine_kernel<c10::Half>(c10::Half const*, c10::Half*, long, c10::Half, c10::Half)"]
        self.assertTrue(kb_split.device_unit(parts, "cuda.cu", kb_split.instantiations(parts, half)).startswith(
            kb_split.SCALAR_HEADERS))


def nvcc():
    home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    found = shutil.which("nvcc") or os.path.join(home, "bin", "nvcc")
    return found if os.path.exists(found) else None


STAND_IN = """#pragma once
#include <cstddef>
namespace torch {
struct Tensor {
  void* p = nullptr;
  long n = 0;
  template <class T> T* data_ptr() const { return static_cast<T*>(p); }
  void* data_ptr() const { return p; }
  long numel() const { return n; }
};
inline Tensor empty_like(const Tensor& t) { return t; }
}  // namespace torch
#define STAND_IN_TORCH_MACRO 1
"""


@unittest.skipIf(nvcc() is None, "no nvcc")
class Build(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="kb-split-")
        os.makedirs(os.path.join(self.dir, "include", "torch"))
        for header in ("extension.h", "types.h"):
            with open(os.path.join(self.dir, "include", "torch", header), "w") as f:
                f.write(STAND_IN)
        self.env = dict(os.environ, KMCTS_REAL_NVCC=nvcc())
        self.env.pop("KMCTS_PCH_DIR", None)

    def tearDown(self):
        shutil.rmtree(self.dir)

    def build(self, body, *flags, env=None):
        source = os.path.join(self.dir, "cuda.cu")
        with open(source, "w") as f:
            f.write(PREFIX + body)
        run = subprocess.run([sys.executable, os.path.join(HARNESS, "kb_nvcc.py"), "-MD", "-MF",
                              os.path.join(self.dir, "cuda.cuda.o.d"), "-I", os.path.join(self.dir, "include"),
                              "--expt-relaxed-constexpr", "--compiler-options", "-fPIC", "-std=c++17", *flags,
                              "-c", source, "-o", os.path.join(self.dir, "cuda.cuda.o")],
                             env={**self.env, **(env or {})}, capture_output=True, text=True, cwd=self.dir)
        return run, source

    def built(self, body):
        """The run of a build that must succeed, split or whole."""
        run, _ = self.build(body)
        self.assertEqual(run.returncode, 0, run.stderr)
        return run

    def symbols(self):
        out = subprocess.run(["nm", "-C", os.path.join(self.dir, "cuda.cuda.o")], capture_output=True, text=True)
        return out.stdout

    def test_the_split_object_holds_the_host_function_and_the_kernel(self):
        body = fixture("relu_plain")[len(PREFIX):]
        run, source = self.build(body)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertNotIn("not split", run.stderr)
        self.assertTrue(os.path.exists(os.path.join(self.dir, "cuda.kmcts-host.o")))
        symbols = self.symbols()
        self.assertRegex(symbols, r" T run\(torch::Tensor\)")
        self.assertRegex(symbols, r" T relu_kernel\(float const\*, float\*, int\)")
        self.assertRegex(symbols, r" U cudaLaunchKernel")
        with open(os.path.join(self.dir, "cuda.cuda.o.d")) as f:
            depfile = f.read()
        # Ninja's depfile: its output, the source as written, never the units (written while
        # ninja's command runs, they would make the object look stale at every load_inline).
        self.assertTrue(depfile.startswith(os.path.join(self.dir, "cuda.cuda.o") + ": " + source))
        self.assertNotIn("kmcts-", depfile)

    def test_the_runtime_headers_are_where_nvcc_says_not_beside_it(self):
        # As on CI: the nvcc run lies in a folder whose ../include holds no cuda_runtime.h (a
        # wrapper here); the host unit finds the headers where nvcc's own dry run puts them.
        bin_dir = os.path.join(self.dir, "toolkit", "bin")
        os.makedirs(bin_dir)
        wrapper = os.path.join(bin_dir, "nvcc")
        with open(wrapper, "w") as f:
            f.write(f'#!/bin/sh\nexec "{nvcc()}" "$@"\n')
        os.chmod(wrapper, 0o755)
        run, _ = self.build(fixture("relu_plain")[len(PREFIX):], env={"KMCTS_REAL_NVCC": wrapper})
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertNotIn("not split", run.stderr)
        self.assertTrue(os.path.exists(os.path.join(self.dir, "cuda.kmcts-host.o")))

    def test_a_kernel_template_is_instantiated_for_the_host(self):
        body = ("template <int N> __global__ void fill(float* y) { y[threadIdx.x] = N; }\n"
                "torch::Tensor run(torch::Tensor x) { fill<3><<<1, 32>>>(x.data_ptr<float>()); return x; }\n")
        run, _ = self.build(body)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertNotIn("not split", run.stderr)
        self.assertRegex(self.symbols(), r" W void fill<3>\(float\*\)")

    def test_a_unit_that_does_not_build_sends_the_source_to_nvcc_whole(self):
        # The kernel uses a macro only the torch header defines: the kernels' unit fails, the
        # source as written builds.
        body = ("__global__ void k(int* y) { y[0] = STAND_IN_TORCH_MACRO; }\n"
                "torch::Tensor run(torch::Tensor x) { k<<<1, 1>>>(x.data_ptr<int>()); return x; }\n")
        run, _ = self.build(body)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("not split (its kernels' unit did not compile)", run.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "cuda.kmcts-host.o")))  # nothing taken for a split
        self.assertRegex(self.symbols(), r" T run\(torch::Tensor\)")

    def test_kernel_attributes_and_occupancy_are_asked_of_the_kernel_itself(self):
        body = ("__global__ void k(float* y) { extern __shared__ float s[]; s[0] = 1; y[0] = s[0]; }\n"
                "torch::Tensor run(torch::Tensor x) {\n"
                "  cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536);\n"
                "  cudaFuncAttributes attr; cudaFuncGetAttributes(&attr, k);\n"
                "  int blocks = 0; cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k, 128, 65536);\n"
                "  k<<<blocks, 128, 65536>>>(x.data_ptr<float>()); return x; }\n")
        run = self.built(body)
        self.assertNotIn("not split", run.stderr)
        self.assertRegex(self.symbols(), r" U cudaFuncSetAttribute")

    def test_a_kernel_the_split_leaves_undefined_keeps_the_source_whole(self):
        # A kernel template defined outside its namespace: its instantiation is not recognised,
        # ld -r would accept the undefined stub, and the module would fail at import.
        body = ("namespace kern { template <typename T> __global__ void fill(T* y); }\n"
                "template <typename T> __global__ void kern::fill(T* y) { y[0] = 1; }\n"
                "torch::Tensor run(torch::Tensor x) { kern::fill<float><<<1, 1>>>(x.data_ptr<float>()); return x; }\n")
        run = self.built(body)
        self.assertIn("not split (the kernel void kern::fill<float>(float*) is launched but not defined)", run.stderr)
        self.assertRegex(self.symbols(), r" (W|T|t) void kern::fill<float>\(float\*\)")

    def test_a_kernel_parameter_by_reference_keeps_the_source_whole(self):
        body = ("struct Args { float* y; };\n__global__ void k(Args& a) { a.y[0] = 1; }\n"
                "torch::Tensor run(torch::Tensor x) { Args a{x.data_ptr<float>()}; k<<<1, 1>>>(a); return x; }\n")
        run, _ = self.build(body)
        self.assertIn("not split (its host unit did not compile)", run.stderr)

    def test_nvcc_flags_from_the_environment_keep_the_source_whole(self):
        run, _ = self.build(fixture("relu_plain")[len(PREFIX):], env={"NVCC_APPEND_FLAGS": "--default-stream per-thread"})
        self.assertIn("not split (NVCC_APPEND_FLAGS is set)", run.stderr)

    def test_an_unknown_nvcc_option_keeps_the_source_whole(self):
        run, _ = self.build(fixture("relu_plain")[len(PREFIX):], "--some-future-option")
        self.assertIn("not split (an nvcc option it does not know)", run.stderr)

    def test_the_split_can_be_switched_off(self):
        run, _ = self.build(fixture("relu_plain")[len(PREFIX):], env={"KMCTS_SPLIT_CUDA": "0"})
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "cuda.kmcts-host.o")))


if __name__ == "__main__":
    unittest.main()
