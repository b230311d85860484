"""The host-compiler wrapper of KernelBench extension builds (hardware/kernelbench/harness/kb_cxx.py),
with the real compiler on a stand-in torch/extension.h (a header of our own in a temporary
include folder): the precompiled header is made once and then used (g++ -H marks a used one with
'!'), a source that does something before its torch include is compiled without it, other
flags get a header of their own, a header that cannot be precompiled leaves the compile as it
was, and links and probes pass through untouched."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

WRAPPER = os.path.join(os.path.dirname(__file__), "..", "..", "hardware", "kernelbench", "harness", "kb_cxx.py")

HEADER = """#pragma once
#include <vector>
#include <map>
#include <string>
namespace torch { inline int answer() { return 42; } }
#ifdef KMCTS_TEST_BREAK_PCH
#error the stand-in header refuses this flag
#endif
"""

BINDING = """#include <torch/extension.h>
int twice() { return 2 * torch::answer(); }
"""


@unittest.skipIf(shutil.which("c++") is None, "no C++ compiler")
class Wrapper(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="kb-cxx-")
        os.makedirs(os.path.join(self.dir, "include", "torch"))
        with open(os.path.join(self.dir, "include", "torch", "extension.h"), "w") as f:
            f.write(HEADER)
        self.pch = os.path.join(self.dir, "pch")
        self.env = dict(os.environ, KMCTS_PCH_DIR=self.pch, KMCTS_REAL_CXX="c++")

    def tearDown(self):
        shutil.rmtree(self.dir)

    def source(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def compile(self, source, *flags):
        """The wrapper run as torch's ninja runs CXX; its stderr (with -H's include tree)."""
        obj = source + ".o"
        run = subprocess.run([sys.executable, WRAPPER, "-MMD", "-MF", obj + ".d", "-DTORCH_EXTENSION_NAME=ext_" +
                              os.path.basename(source).split(".")[0], "-isystem", os.path.join(self.dir, "include"),
                              "-fPIC", "-std=c++17", *flags, "-H", "-c", source, "-o", obj],
                             env=self.env, capture_output=True, text=True, check=False)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertTrue(os.path.exists(obj))
        return run.stderr

    def headers_made(self):
        return sorted(os.path.join(root, f) for root, _, files in os.walk(self.pch) for f in files if f.endswith(".gch"))

    def test_made_once_then_used(self):
        first = self.compile(self.source("a.cpp", BINDING))
        (gch,) = self.headers_made()
        stamp = os.stat(gch).st_mtime_ns
        second = self.compile(self.source("b.cpp", "// a comment first\n/* and another */\n" + BINDING), "-O2")
        self.assertEqual(len(self.headers_made()), 2, "-O2 is another set of flags: another header")
        third = self.compile(self.source("c.cpp", BINDING.replace("twice", "thrice")))
        self.assertEqual(os.stat(gch).st_mtime_ns, stamp, "the header is made once")
        for log in (first, second, third):
            self.assertIn("! " + os.path.join(self.pch, ""), log, "g++ used the precompiled header")
            self.assertNotIn("invalid", log)

    def test_code_before_the_include_is_compiled_without_it(self):
        log = self.compile(self.source("d.cpp", "#define TORCH_SOMETHING 1\n" + BINDING))
        self.assertEqual(self.headers_made(), [])
        self.assertNotIn(self.pch, log)

    def test_a_header_that_cannot_be_precompiled_leaves_the_compile_as_it_was(self):
        # The flag makes the header itself fail: the PCH is refused, and so would the compile be
        # without the wrapper; a source that does not include it compiles either way.
        log = self.compile(self.source("e.cpp", "int plain() { return 1; }\n"), "-DKMCTS_TEST_BREAK_PCH")
        self.assertNotIn(self.pch, log)
        run = subprocess.run([sys.executable, WRAPPER, "-isystem", os.path.join(self.dir, "include"),
                              "-DKMCTS_TEST_BREAK_PCH", "-c", self.source("f.cpp", BINDING), "-o",
                              os.path.join(self.dir, "f.o")], env=self.env, capture_output=True, text=True)
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("refuses this flag", run.stderr)
        self.assertIn("no precompiled torch/extension.h", run.stderr)
        (failed,) = [os.path.join(r, f) for r, _, fs in os.walk(self.pch) for f in fs if f == "failed.log"]
        with open(failed) as f:
            self.assertIn("refuses this flag", f.read())

    def test_a_compiler_of_several_words_and_an_unwritable_folder(self):
        # CXX as "ccache g++" is a command of two words ("env c++" stands in for it here).
        self.env["KMCTS_REAL_CXX"] = "env c++"
        self.assertIn("! " + os.path.join(self.pch, ""), self.compile(self.source("h.cpp", BINDING)))
        # A precompiled-header folder that cannot be made: the compile goes on without one.
        self.env["KMCTS_PCH_DIR"] = os.path.join(self.source("not_a_folder", "x"), "pch")
        log = self.compile(self.source("i.cpp", BINDING))
        self.assertIn("no precompiled torch/extension.h", log)

    def make_pch(self, request):
        return subprocess.run([sys.executable, WRAPPER, "--make-pch", request], env=self.env, capture_output=True,
                              text=True)

    def test_a_confined_build_requests_and_kmcts_makes_the_header(self):
        # A confined build sees the shared folder read-only: it asks, and compiles without one.
        requests = os.path.join(self.dir, "requests")
        self.env["KMCTS_PCH_REQUESTS"] = requests
        log = self.compile(self.source("j.cpp", BINDING), "-O3")
        self.assertIn("requested", log)
        self.assertNotIn("! " + os.path.join(self.pch, ""), log)
        self.assertEqual(self.headers_made(), [])
        (request,) = [os.path.join(requests, f) for f in os.listdir(requests)]
        made = self.make_pch(request)
        self.assertEqual(made.returncode, 0, made.stderr)
        self.assertIn('"made": true', made.stdout)
        self.assertEqual(len(self.headers_made()), 1)
        # The next confined build of those flags uses it, and asks for nothing.
        os.remove(request)
        log = self.compile(self.source("k.cpp", BINDING), "-O3")
        self.assertIn("! " + os.path.join(self.pch, ""), log)
        self.assertEqual(os.listdir(requests), [])

    def test_a_request_with_a_dangerous_flag_or_another_compiler_is_refused(self):
        requests = os.path.join(self.dir, "requests")
        self.env["KMCTS_PCH_REQUESTS"] = requests
        self.compile(self.source("l.cpp", BINDING))
        (request,) = [os.path.join(requests, f) for f in os.listdir(requests)]
        with open(request) as f:
            good = json.load(f)
        for flags, compiler, says in (([*good["flags"], "-fplugin=/tmp/evil.so"], good["compiler"], "-fplugin"),
                                      ([*good["flags"], "-Wp,-MD,/tmp/x"], good["compiler"], "-Wp"),
                                      ([*good["flags"], "@/etc/shadow"], good["compiler"], "@/etc/shadow"),
                                      (good["flags"], ["/bin/sh", "-c", "touch /tmp/x"], "another compiler")):
            with open(request, "w") as f:
                json.dump(dict(good, flags=flags, compiler=compiler), f)
            made = self.make_pch(request)
            self.assertNotEqual(made.returncode, 0)
            self.assertIn(says, made.stderr)
        self.assertEqual(self.headers_made(), [])

    def test_links_and_probes_pass_through(self):
        obj = self.source("g.cpp", BINDING) + ".o"
        self.compile(obj[:-2])
        main = self.source("main.cpp", "int twice(); int main() { return twice() == 84 ? 0 : 1; }\n")
        exe = os.path.join(self.dir, "prog")
        run = subprocess.run([sys.executable, WRAPPER, main, obj, "-o", exe], env=self.env, capture_output=True,
                             text=True)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(subprocess.run([exe]).returncode, 0)
        probe = subprocess.run([sys.executable, WRAPPER, "-v"], env=self.env, capture_output=True, text=True)
        self.assertIn("version", probe.stderr)


if __name__ == "__main__":
    unittest.main()
