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

import kb_split

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


# nvcc's options a split understands: those the host unit keeps (with their argument, when it is
# the next word), those only the kernels' unit takes; any other option keeps the source whole.
HOST_WITH_ARGUMENT = ("-I", "-isystem", "-D", "-U", "-include")
HOST_PREFIXES = ("-I", "-D", "-U", "-std=", "-isystem")
HOST_FLAGS = re.compile(r"-O[0-3s]?|-g|-w|-fPIC")
COMPILER_OPTIONS = ("-Xcompiler", "--compiler-options")
NVCC_WITH_ARGUMENT = ("-o", "-gencode", "--generate-code", "-arch", "--gpu-architecture", "-code", "--gpu-code",
                      "--dependency-output", "-MF", "-ccbin", "--compiler-bindir", "-Xptxas", "--ptxas-options",
                      "-maxrregcount", "--maxrregcount", "--threads", "-t", "--diag-suppress", "-diag-suppress")
NVCC_FLAGS = re.compile(r"-c|--generate-dependencies-with-compile|--expt-relaxed-constexpr|--expt-extended-lambda|"
                        r"--extended-lambda|-lineinfo|--use_fast_math|-use_fast_math|-Xfatbin=.*|-MD|-MMD|"
                        r"(-|--)(gencode|generate-code|arch|gpu-architecture|code|gpu-code|maxrregcount|threads|"
                        r"ptxas-options|Xptxas|dependency-output|ftz|prec-div|prec-sqrt|fmad|diag-suppress|"
                        r"static-global-template-stub)=.*")  # not --default-stream: it changes host code's launches


def host_flags(args, source):
    """The host compiler's flags for the host unit (include paths, macros, language standard,
    optimisation, nvcc's -Xcompiler words), the -ccbin compiler if one is named, or None when
    an option is not one a split understands."""
    flags, ccbin, i = [], None, 0
    while i < len(args):
        a = args[i]
        following = args[i + 1] if i + 1 < len(args) else None
        if a == source:
            pass
        elif a in HOST_WITH_ARGUMENT and following is not None:
            flags += [a, following]
            i += 1
        elif a in COMPILER_OPTIONS and following is not None:
            flags += compiler_words(following)
            i += 1
        elif a.startswith(tuple(o + "=" for o in COMPILER_OPTIONS)):
            flags += compiler_words(a.split("=", 1)[1])
        elif a in ("-ccbin", "--compiler-bindir") and following is not None:
            ccbin = following
            i += 1
        elif a in NVCC_WITH_ARGUMENT and following is not None:
            i += 1
        elif a.startswith(HOST_PREFIXES) or HOST_FLAGS.fullmatch(a):
            flags.append(a)
        elif not NVCC_FLAGS.fullmatch(a):
            return None
        i += 1
    return flags, ccbin


def nvcc_includes(nvcc):
    """The include options nvcc itself gives its host compiler (the CUDA runtime's headers), as its
    --dryrun prints them: where they lie depends on how CUDA was installed (a toolkit's
    targets/<arch>/include, pip wheels gathered under one folder, CUDA_HOME elsewhere), so they
    are asked of nvcc, not guessed from its path."""
    dry = run_quiet([*nvcc, "--dryrun", "-c", "-x", "cu", os.devnull, "-o", os.devnull])
    words = []
    for line in dry.stderr.splitlines() + dry.stdout.splitlines():
        found = re.match(r"#\$ (SYSTEM_INCLUDES|INCLUDES)=(.*)$", line.strip())
        if found:
            words += shlex.split(found.group(2))
    includes = []
    for word in filter(None, words):  # system headers, as before: their warnings are not the candidate's
        includes += ["-isystem", word[2:]] if word.startswith("-I") and len(word) > 2 else [word]
    if not includes:  # an nvcc that prints no dry run: the toolkit's layout, from its path
        home = os.path.dirname(os.path.dirname(os.path.realpath(shutil.which(nvcc[-1]) or nvcc[-1])))
        includes = ["-isystem", os.path.join(home, "include")]
    return includes


def compiler_words(value):
    """The host compiler's words in an -Xcompiler value: comma-separated, quotes dropped."""
    return [w.strip("'\"") for w in value.split(",") if w.strip("'\"")]


def run_quiet(command, **kwargs):
    return subprocess.run(command, capture_output=True, text=True, check=False, **kwargs)


def strong_symbols(obj):
    """The global symbols an object defines strongly (a second definition would clash)."""
    out = run_quiet(["nm", "-g", "--defined-only", obj])
    return {line.split()[-1] for line in out.stdout.splitlines() if len(line.split()) == 3
            and line.split()[1] in "TDBRC"}


def split_build(nvcc, args, index):
    """Builds the source at args[index] as two units (kb_split.py) into the object nvcc was asked
    for; the exit status, or None when the source is not split (the caller compiles it whole)."""
    source = args[index]
    try:
        with open(source, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError):
        return None
    if not text.startswith(IMPLICIT) or "-o" not in args or "-x" in args:
        return None
    parsed = host_flags(args, source)
    if parsed is None:
        return note("an nvcc option it does not know")
    for variable in ("NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS"):  # flags nvcc adds that the host unit would miss
        words = shlex.split(os.environ.get(variable, ""))
        if any(w not in ("--time", "-time") and not (i and words[i - 1] in ("--time", "-time"))
               for i, w in enumerate(words)):
            return note(f"{variable} is set")
    flags, ccbin = parsed
    try:
        parts = kb_split.split(text)
    except kb_split.Decline as e:
        return note(str(e))
    output = args[args.index("-o") + 1]
    stem = os.path.splitext(source)[0]
    host_source, host_object = f"{stem}.kmcts-host.cpp", f"{stem}.kmcts-host.o"
    kernels_source, kernels_object = f"{stem}.kmcts-kernels.cu", f"{stem}.kmcts-kernels.o"

    def dropped(reason, detail=""):  # no object of a split that did not happen stays to be taken for one
        for leftover in (host_object, kernels_object):
            if os.path.exists(leftover):
                os.remove(leftover)
        return note(reason, detail)

    with open(host_source, "w", encoding="utf-8") as f:
        f.write(kb_split.host_unit(parts, source))
    env = None
    if ccbin and not os.environ.get("KMCTS_REAL_CXX"):  # nvcc's host compiler, as its C++ driver
        cxx = os.path.join(os.path.dirname(ccbin), {"gcc": "g++", "clang": "clang++", "cc": "c++"}.get(
            os.path.basename(ccbin), os.path.basename(ccbin)))
        env = dict(os.environ, KMCTS_REAL_CXX=cxx if os.path.exists(cxx) else ccbin)
    host = run_quiet([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "kb_cxx.py"),
                      *flags, *nvcc_includes(nvcc), "-Wno-attributes", "-c", host_source, "-o", host_object],
                     env=env)
    sys.stderr.write("".join(line for line in host.stderr.splitlines(True) if line.startswith("kb_cxx:")))
    if host.returncode != 0:
        return dropped("its host unit did not compile", host.stderr)
    undefined = run_quiet(["nm", "-u", "-C", host_object]).stdout.splitlines()
    needed = kb_split.instantiations(parts, [line.split(None, 1)[-1].strip() for line in undefined if line.strip()])
    with open(kernels_source, "w", encoding="utf-8") as f:
        f.write(kb_split.device_unit(parts, source, needed))
    device_args = list(args)
    device_args[index] = kernels_source
    device_args[device_args.index("-o") + 1] = kernels_object
    depfile = private_depfile(device_args, f"{stem}.kmcts-kernels.d")
    if parts.kernel_templates:
        device_args.append("-static-global-template-stub=false")  # the host unit links to their stubs
    kernels = run_quiet([*nvcc, *device_args])
    if kernels.returncode != 0:
        return dropped("its kernels' unit did not compile", kernels.stderr + kernels.stdout)
    twice = strong_symbols(host_object) & strong_symbols(kernels_object)
    if twice:
        return dropped(f"both units define {sorted(twice)[0]}")
    joined = run_quiet(["ld", "-r", "-o", output, host_object, kernels_object])
    if joined.returncode != 0:
        return dropped("its units did not link", joined.stderr)
    missing = unresolved_kernels(output, parts.kernels)
    if missing:  # a kernel the host launches that the kernels' unit did not define (or instantiate)
        os.remove(output)
        return dropped(f"the kernel {missing} is launched but not defined")
    if depfile:
        write_depfile(depfile, output, source, f"{stem}.kmcts-kernels.d", kernels_source)
    sys.stderr.write(kernels.stderr)
    return 0


def unresolved_kernels(obj, kernels):
    """The first undefined symbol of `obj` that names one of the kernels, or None."""
    names = {k.split("::")[-1] for k in kernels}
    for line in run_quiet(["nm", "-u", "-C", obj]).stdout.splitlines():
        symbol = line.split(None, 1)[-1].strip()
        m = re.match(r"^(?:void )?(?:[\w:]+::)?(\w+)\s*[<(]", symbol)
        if m and m.group(1) in names:
            return symbol
    return None


def private_depfile(args, private):
    """Points nvcc's depfile option in `args` (changed in place) at `private`; the depfile ninja
    asked for, or None when it asked for none."""
    for i, a in enumerate(args[:-1]):
        if a in ("-MF", "--dependency-output"):
            asked, args[i + 1] = args[i + 1], private
            return asked
    return None


def write_depfile(path, output, source, kernels_depfile, kernels_source):
    """The depfile ninja asked for: its output, depending on the source as written and on the
    headers nvcc read for the copy it compiled (`kernels_source`, left out). Naming the copy,
    which is written while ninja's command runs, made the object older than one of its inputs
    to ninja 1.12 and later (they record an output's time as its command's start), so every
    load_inline built it again: the evaluation's too, holding the GPU."""
    try:
        with open(kernels_depfile, encoding="utf-8") as f:
            text = f.read().replace("\\\n", " ")
    except OSError:
        text = ""
    words = re.split(r"(?<!\\)\s+", text.split(":", 1)[1].strip()) if ":" in text else []
    deps = [source] + [w for w in words if w and os.path.realpath(w) not in (os.path.realpath(kernels_source),
                                                                            os.path.realpath(source))]
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"{output}: " + " \\\n  ".join(deps) + "\n")


def note(reason, detail=""):
    """Says why the source is compiled whole; None (the caller's cue to do so)."""
    tail = "".join(detail.splitlines(True)[-6:])
    sys.stderr.write(f"kb_nvcc: not split ({reason}); building the CUDA source as written\n" +
                     (f"{tail}" if tail else ""))
    return None


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
            depfile = private_depfile(light, f"{os.path.splitext(copy)[0]}.d")
            run = run_quiet([*nvcc, *light])
            errors = [line for line in (run.stdout + run.stderr).splitlines() if ": error" in line]
            if run.returncode == 0 or (errors and not any(MISSING_DECLARATION.search(e) for e in errors)):
                if run.returncode == 0 and depfile and "-o" in args:
                    write_depfile(depfile, args[args.index("-o") + 1], args[sources[0]],
                                  f"{os.path.splitext(copy)[0]}.d", copy)
                sys.stdout.write(run.stdout)
                sys.stderr.write(run.stderr)
                sys.exit(run.returncode)
            sys.stderr.write("kb_nvcc: the CUDA source did not build without torch/types.h; building it as written\n")
        elif os.environ.get("KMCTS_SPLIT_CUDA", "1") != "0":
            try:
                status = split_build(nvcc, args, sources[0])
            except Exception as e:  # noqa: BLE001 - a fault of the split's is never the build's failure
                status = note(f"the split failed: {type(e).__name__}: {e}")
            if status is not None:
                sys.exit(status)
    os.execvp(nvcc[0], [*nvcc, *args])


if __name__ == "__main__":
    main()
