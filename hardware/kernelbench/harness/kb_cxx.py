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
come first and change what that code sees).

Confined builds (a candidate's prebuild) see KMCTS_PCH_DIR read-only: there the wrapper uses a
header that is already made, and for flags that have none it leaves a request in
KMCTS_PCH_REQUESTS (a folder of the candidate's own) and compiles without one. kmcts then makes
the requested header outside the confined build, with this program's --make-pch REQUEST, after
checking that the flags are ones a header build can take harmlessly (no plugins, no files
written or read besides include folders): no candidate can then plant a header that another
candidate's build would use."""

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


def torch_header(args):
    """torch/extension.h as the compiler would find it, for the cache key (a reinstalled torch
    makes another key); None when no include path holds it."""
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


def header_key(compiler, flags, header):
    stat = os.stat(header)
    return hashlib.sha256(json.dumps([compiler_identity(compiler), flags, header, stat.st_mtime_ns,
                                      stat.st_size]).encode()).hexdigest()[:24]


SAFE_FLAG = re.compile(r"-O[0-3sgz]?|-Ofast|-[DU][A-Za-z_][A-Za-z0-9_]*(=.*)?|-std=[a-z0-9+]+|-g[0-9a-z-]*|-w|-H|-pthread"
                       r"|-m[a-z0-9=_.-]+|-W(?![alp],)[a-zA-Z0-9=_+-]+|-f(?!plugin|dump|profile|record|debug-prefix"
                       r"|file-prefix|macro-prefix|auto-profile|save|stack-usage|callgraph|opt-info|diagnostics-log)"
                       r"[a-zA-Z0-9=_.+-]+")
PATH_FLAGS = ("-I", "-isystem", "-iquote", "-idirafter")


def safe_flags(flags):
    """None when every flag may go to a trusted header build; else the first that may not."""
    i = 0
    while i < len(flags):
        f = flags[i]
        if f in PATH_FLAGS:
            if i + 1 >= len(flags) or not os.path.isdir(flags[i + 1]):
                return f
            i += 2
            continue
        if f.startswith("-I") and os.path.isdir(f[2:]):
            i += 1
            continue
        if not SAFE_FLAG.fullmatch(f):
            return f
        i += 1
    return None


def precompiled_header(compiler, flags, pch_dir, header):
    """The path to -include for these flags, made first if it is not there yet; None when it
    cannot be made (the compile then goes on without it)."""
    folder = os.path.join(pch_dir, header_key(compiler, flags, header))
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


def made_header(compiler, flags, pch_dir, header, requests):
    """Confined: the shared header for these flags when it is made; else a request for it in
    `requests` (made later by kmcts) and None."""
    key = header_key(compiler, flags, header)
    path = os.path.join(pch_dir, key, HEADER)
    if os.path.exists(path + ".gch") and not os.path.exists(os.path.join(pch_dir, key, "failed.log")):
        return path
    os.makedirs(requests, exist_ok=True)
    with open(os.path.join(requests, key + ".json"), "w", encoding="utf-8") as f:
        json.dump({"compiler": compiler, "flags": flags, "header": header}, f)
    sys.stderr.write(f"kb_cxx: no precompiled torch/extension.h for these flags yet (requested {key}); "
                     "compiling without it\n")
    return None


def make_requested(request_file):
    """kmcts's side: makes the header a confined build asked for, if its flags are safe."""
    with open(request_file, encoding="utf-8") as f:
        request = json.load(f)
    compiler, flags, header = request.get("compiler"), request.get("flags"), request.get("header")
    if not (isinstance(compiler, list) and compiler == real_compiler() and isinstance(flags, list)
            and all(isinstance(x, str) for x in flags) and isinstance(header, str)):
        sys.exit("kb_cxx: malformed request, or for another compiler")
    if os.path.basename(header) != "extension.h" or header != torch_header(flags) or not os.path.isfile(header):
        sys.exit("kb_cxx: the request's header is not torch/extension.h on its include path")
    bad = safe_flags(flags)
    if bad is not None:
        sys.exit(f"kb_cxx: the request's flag {bad!r} is not one a shared header build takes")
    path = precompiled_header(compiler, flags, os.environ["KMCTS_PCH_DIR"], header)
    print(json.dumps({"made": path is not None, "path": path}))


def main():
    args = sys.argv[1:]
    if len(args) == 2 and args[0] == "--make-pch":
        make_requested(args[1])
        return
    compiler = real_compiler()
    parts = compile_parts(args)
    pch_dir = os.environ.get("KMCTS_PCH_DIR")
    header = torch_header(args) if parts and pch_dir and opens_with_torch_include(parts[0]) else None
    if header:
        requests = os.environ.get("KMCTS_PCH_REQUESTS")
        try:
            path = (made_header(compiler, parts[1], pch_dir, header, requests) if requests
                    else precompiled_header(compiler, parts[1], pch_dir, header))
        except OSError as e:  # a folder that cannot be written, a full disk: compile without it
            sys.stderr.write(f"kb_cxx: no precompiled torch/extension.h ({e}); compiling without it\n")
            path = None
        if path:
            args = ["-include", path, "-Winvalid-pch", *args]
    os.execvp(compiler[0], [*compiler, *args])


if __name__ == "__main__":
    main()
