"""The staging of a candidate's extension folder by the trusted side (hardware/kernelbench/harness/
ext_stage.py, issue 28): a folder torch built at a path, kept in a read-only cache, copied back to
the same path is loaded without a build (ninja: no work to do), its files' times kept; whatever a
previous candidate left at that path (a link to elsewhere included) is removed first and
elsewhere left alone. Uses torch.utils.cpp_extension.load on a module of plain C (a build of a
second); skipped without torch."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "hardware", "kernelbench", "harness"))
from ext_stage import stage_extensions, unstage_extensions  # noqa: E402

try:
    import torch  # noqa: F401
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False

SOURCE = r"""
#include <Python.h>
static struct PyModuleDef def = {PyModuleDef_HEAD_INIT, "kmcts_stage_probe", NULL, -1, NULL};
PyMODINIT_FUNC PyInit_kmcts_stage_probe(void) { return PyModule_Create(&def); }
"""
LOAD = ("import sys\nfrom torch.utils.cpp_extension import load\n"
        "m = load('kmcts_stage_probe', [sys.argv[1]], verbose=True)\nprint('loaded', m.__file__)\n")


def load(source, extensions):
    run = subprocess.run([sys.executable, "-c", LOAD, source], capture_output=True, text=True, timeout=600,
                         env=dict(os.environ, TORCH_EXTENSIONS_DIR=extensions), check=False)
    return run.returncode, run.stdout + run.stderr


def times(folder):
    return {os.path.relpath(os.path.join(d, f), folder): os.lstat(os.path.join(d, f)).st_mtime_ns
            for d, _, files in os.walk(folder) for f in files}


@unittest.skipUnless(HAVE_TORCH, "no torch")
class StageTest(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp()
        self.source = os.path.join(self.work, "probe.cpp")
        with open(self.source, "w") as f:
            f.write(SOURCE)
        self.seen = os.path.join(self.work, "tmp", "kmcts-extensions", "abc")  # the path builds see
        self.cache = os.path.join(self.work, "cache", "abc")

    def tearDown(self):
        for d, _, _ in os.walk(self.work):
            os.chmod(d, 0o755)
        shutil.rmtree(self.work)

    def test_a_staged_copy_loads_without_a_build(self):
        code, out = load(self.source, self.seen)  # the prebuild, its folder bound at the path
        self.assertEqual(code, 0, out)
        self.assertIn("kmcts_stage_probe.so", out)
        os.makedirs(os.path.dirname(self.cache))
        shutil.move(self.seen, self.cache)  # what the cache holds afterwards
        built = times(self.cache)
        for d, _, files in os.walk(self.cache):  # read-only, as in the harness's view
            for f in files:
                os.chmod(os.path.join(d, f), 0o444)
        # A previous candidate's leftovers: a link at the path, pointing at a folder of its own.
        elsewhere = os.path.join(self.work, "elsewhere")
        os.makedirs(os.path.join(elsewhere, "kmcts_stage_probe"))
        with open(os.path.join(elsewhere, "kmcts_stage_probe", "build.ninja"), "w") as f:
            f.write("planted")
        os.symlink(elsewhere, self.seen)
        seconds = stage_extensions({"KMCTS_EXTENSIONS_FROM": self.cache, "TORCH_EXTENSIONS_DIR": self.seen})
        self.assertIsNotNone(seconds)
        self.assertFalse(os.path.islink(self.seen))
        with open(os.path.join(elsewhere, "kmcts_stage_probe", "build.ninja")) as f:
            self.assertEqual(f.read(), "planted")
        self.assertEqual(times(self.seen), built)
        code, out = load(self.source, self.seen)
        self.assertEqual(code, 0, out)
        self.assertIn("no work to do", out)
        self.assertIn(os.path.join(self.seen, "kmcts_stage_probe", "kmcts_stage_probe.so"), out)

    def test_what_an_earlier_candidate_did_to_the_folder_is_undone(self):
        # A candidate of the same uid may have made the staging folder unwritable, or put a file
        # or a FIFO in its place; the staging removes it all, skips special files in the cache,
        # and the copy goes again after the evaluation.
        os.makedirs(os.path.join(self.cache, "sub"))
        with open(os.path.join(self.cache, "sub", "lib.so"), "w") as f:
            f.write("built")
        os.mkfifo(os.path.join(self.cache, "sub", "pipe"))
        top = os.path.dirname(self.seen)
        os.makedirs(os.path.join(top, "old", "deep"))
        os.chmod(os.path.join(top, "old", "deep"), 0)
        os.chmod(top, 0o500)
        env = {"KMCTS_EXTENSIONS_FROM": self.cache, "TORCH_EXTENSIONS_DIR": self.seen}
        stage_extensions(env)
        with open(os.path.join(self.seen, "sub", "lib.so")) as f:
            self.assertEqual(f.read(), "built")
        self.assertFalse(os.path.exists(os.path.join(self.seen, "sub", "pipe")))
        self.assertFalse(os.path.exists(os.path.join(top, "old")))
        unstage_extensions(env)
        # Emptied, not removed: candidates' processes started ahead write in it by a rule that
        # names this folder (candidate_worker.guard).
        self.assertEqual(os.listdir(top), [])
        os.rmdir(top)
        with open(top, "w") as f:  # a file where the folder goes
            f.write("x")
        stage_extensions(env)
        self.assertTrue(os.path.isdir(self.seen))

    def test_nothing_to_stage(self):
        self.assertIsNone(stage_extensions({"TORCH_EXTENSIONS_DIR": self.seen}))
        # A candidate whose prebuild left nothing: an empty folder of its own at the path.
        self.assertIsNotNone(stage_extensions({"KMCTS_EXTENSIONS_FROM": self.cache, "TORCH_EXTENSIONS_DIR": self.seen}))
        self.assertEqual(os.listdir(self.seen), [])


if __name__ == "__main__":
    unittest.main()
