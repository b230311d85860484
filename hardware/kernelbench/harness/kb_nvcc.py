#!/usr/bin/env python3
"""The nvcc torch's extension builds call (kmcts sets PYTORCH_NVCC to this file): it runs the real
nvcc (KMCTS_REAL_NVCC, else nvcc) as asked, except for one case. load_inline puts
`#include <torch/types.h>` (with cuda.h and cuda_runtime.h) before every CUDA source, and nvcc's
three front ends then parse torch: most of a minute of CPU, where the kernels alone take about
a second (bench/results/kernelbench-builds.md). When the candidate's own CUDA source names
nothing of torch (kernels and a launcher over raw pointers, the torch::Tensor wrapper in
cpp_sources), the torch include can serve nothing in it, so it is compiled without that line
(a #line directive keeps nvcc's messages pointing at the original lines). Should that copy
not compile for want of a declaration the torch header may have brought (an undefined
identifier, a missing member, header or overload), the original is compiled as it is, and its
result stands; errors of the candidate's own code (a type mismatch, a wrong operator) are
reported from the copy at once, sparing a second failing compile of torch's headers (15 to 25
s on the H200)."""

import os
import re
import shlex
import shutil
import subprocess
import sys

IMPLICIT = "#include <torch/types.h>\n"
# nvcc errors that a missing header can cause: only these send a failed copy to the original.
MISSING_DECLARATION = re.compile(r"is undefined|has no member|is not a template|cannot open source file|"
                                 r"incomplete type|not declared|no instance of overloaded function|"
                                 r"explicit type is missing|expected a type specifier|is not a type name")
# What a source that uses torch names: namespaces, its macros, its headers.
TORCH_NAMES = re.compile(r"\b(torch|c10|ATen|caffe2)\b|\bat\s*::|\b(TORCH|AT|C10)_\w+")


def real_nvcc():
    """KMCTS_REAL_NVCC (kmcts passes a PYTORCH_NVCC the user had set), else the nvcc torch itself
    would run: CUDA_HOME's or CUDA_PATH's, the one on PATH, /usr/local/cuda's."""
    if os.environ.get("KMCTS_REAL_NVCC"):  # may be "ccache nvcc": words
        return shlex.split(os.environ["KMCTS_REAL_NVCC"])
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")):
        if home and os.path.exists(os.path.join(home, "bin", "nvcc")):
            return [os.path.join(home, "bin", "nvcc")]
    return [shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"]


def without_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def torch_free_copy(source):
    """The path of a copy of `source` without load_inline's torch include, or None when the
    source does not open with it or names torch anywhere after it."""
    try:
        with open(source, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError):
        return None
    if not text.startswith(IMPLICIT) or TORCH_NAMES.search(without_comments(text[len(IMPLICIT):])):
        return None
    stem, suffix = os.path.splitext(source)
    copy = f"{stem}.kmcts-torch-free{suffix}"
    with open(copy, "w", encoding="utf-8") as f:
        f.write(f'#line 2 "{source}"\n' + text[len(IMPLICIT):])
    return copy


def main():
    args = sys.argv[1:]
    nvcc = real_nvcc()
    sources = [i for i, a in enumerate(args) if a.endswith(".cu") and not a.startswith("-")]
    if "-c" in args and len(sources) == 1:
        try:
            copy = torch_free_copy(args[sources[0]])
        except OSError:  # the copy cannot be written: the source as written
            copy = None
        if copy:
            light = list(args)
            light[sources[0]] = copy
            run = subprocess.run([*nvcc, *light], capture_output=True, text=True, check=False)
            errors = [line for line in (run.stdout + run.stderr).splitlines() if ": error" in line]
            if run.returncode == 0 or (errors and not any(MISSING_DECLARATION.search(e) for e in errors)):
                sys.stdout.write(run.stdout)
                sys.stderr.write(run.stderr)
                sys.exit(run.returncode)
            sys.stderr.write("kb_nvcc: the CUDA source did not build without torch/types.h; building it as written\n")
    os.execvp(nvcc[0], [*nvcc, *args])


if __name__ == "__main__":
    main()
