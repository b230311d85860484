#!/usr/bin/env python3
"""The host compiler torch's extension builds call (kmcts sets CXX to this file): it runs the real
compiler (KMCTS_REAL_CXX, else c++) as asked, except that a C++ source that opens with
`#include <torch/extension.h>` (every load_inline binding does) is compiled with a precompiled
torch/extension.h. Parsing that header is most of a binding's build (measured in
bench/results/kernelbench-builds.md); the precompiled one is made once per compiler, flags and torch
install, under KMCTS_PCH_DIR, and reused by every later build.

Only the header's own parse is saved: the source is compiled as it is, with the same flags. GCC
checks that a precompiled header fits the compilation it is offered to (flags, macros) and
parses the header itself when it does not; -Winvalid-pch says so in the build log. A source
that does anything before its torch include is compiled without it (the forced include would
come first and change what that code sees)."""

import fcntl
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys

SOURCE_SUFFIXES = (".cpp", ".cc", ".cxx", ".c++")
FIRST_LINE = re.compile(r'\s*#\s*include\s*[<"]torch/extension\.h[>"]')
HEADER = "kmcts_torch_extension.h"


def real_compiler():
    """The real compiler's command, as words: CXX may be "ccache g++" (torch's ninja runs it
    through a shell)."""
    return shlex.split(os.environ.get("KMCTS_REAL_CXX") or "c++")


def opens_with_torch_include(path):
    """True when the first line that is not blank or a comment includes torch/extension.h."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read(1 << 16)
    except OSError:
        return False
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    for line in text.splitlines():
        line = line.split("//", 1)[0].strip()
        if line:
            return FIRST_LINE.match(line) is not None
    return False


def compile_parts(args):
    """(source, flags without the source, -c, -o and dependency output) for a one-source compile
    of C++; None for anything else (a link, a probe such as -v, several sources, another language)."""
    if "-c" not in args or "-x" in args:
        return None
    sources = [a for a in args if a.endswith(SOURCE_SUFFIXES) and not a.startswith("-")]
    if len(sources) != 1:
        return None
    flags, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
        elif a in ("-c", "-MMD", "-MD") or a == sources[0] or a.startswith("-DTORCH_EXTENSION_NAME="):
            pass
        else:
            flags.append(a)
    return sources[0], flags


def torch_header():
    """torch/extension.h as the compiler would find it, for the cache key (a reinstalled torch
    makes another key); None when no include path holds it."""
    args = sys.argv[1:]
    for i, a in enumerate(args):
        folder = args[i + 1] if a in ("-I", "-isystem") and i + 1 < len(args) else (
            a[2:] if a.startswith("-I") and len(a) > 2 else None)
        if folder:
            path = os.path.join(folder, "torch", "extension.h")
            if os.path.exists(path):
                return os.path.realpath(path)
    return None


def compiler_identity(compiler):
    """Its words, the program's path and its version line: another compiler makes another key."""
    out = subprocess.run([*compiler, "-v"], capture_output=True, text=True, check=False)
    return [*compiler, os.path.realpath(shutil.which(compiler[-1]) or compiler[-1]), *out.stderr.strip().splitlines()[-1:]]


def precompiled_header(compiler, flags, pch_dir):
    """The path to -include for these flags, made first if it is not there yet; None when it
    cannot be made (the compile then goes on without it)."""
    header = torch_header()
    if header is None:
        return None
    stat = os.stat(header)
    key = hashlib.sha256(json.dumps([compiler_identity(compiler), flags, header, stat.st_mtime_ns,
                                     stat.st_size]).encode()).hexdigest()[:24]
    folder = os.path.join(pch_dir, key)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, HEADER)
    gch = path + ".gch"
    failed = os.path.join(folder, "failed.log")
    with open(os.path.join(folder, "lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one build of it; the others wait for it
        if os.path.exists(failed):
            return None
        if not os.path.exists(gch):
            with open(path, "w", encoding="utf-8") as f:
                f.write("#include <torch/extension.h>\n")
            tmp = f"{gch}.{os.getpid()}.tmp"
            for stale in os.listdir(folder):  # a build killed part-way left its file
                if stale.endswith(".tmp"):
                    os.remove(os.path.join(folder, stale))
            run = subprocess.run([*compiler, "-x", "c++-header", *flags, path, "-o", tmp],
                                 capture_output=True, text=True, check=False)
            if run.returncode < 0:  # killed (out of memory, say): not a verdict on these flags
                return None
            if run.returncode != 0:
                with open(failed, "w", encoding="utf-8") as f:
                    f.write(run.stderr[-20000:])
                sys.stderr.write(f"kb_cxx: no precompiled torch/extension.h ({failed}); compiling without it\n")
                return None
            os.rename(tmp, gch)
    return path


def main():
    args = sys.argv[1:]
    compiler = real_compiler()
    parts = compile_parts(args)
    pch_dir = os.environ.get("KMCTS_PCH_DIR")
    if parts and pch_dir and opens_with_torch_include(parts[0]):
        try:
            path = precompiled_header(compiler, parts[1], pch_dir)
        except OSError as e:  # a folder that cannot be written, a full disk: compile without it
            sys.stderr.write(f"kb_cxx: no precompiled torch/extension.h ({e}); compiling without it\n")
            path = None
        if path:
            args = ["-include", path, "-Winvalid-pch", *args]
    os.execvp(compiler[0], [*compiler, *args])


if __name__ == "__main__":
    main()
