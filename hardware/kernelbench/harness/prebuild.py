"""Builds a KernelBench candidate's extensions ahead of its evaluation, on the CPU pool, with no
GPU visible (kmcts runs it with CUDA_VISIBLE_DEVICES empty and TORCH_EXTENSIONS_DIR and
TORCH_CUDA_ARCH_LIST set): importing the candidate runs its load_inline/load calls, which
compile into TORCH_EXTENSIONS_DIR; the evaluation later loads the built library instead of
holding a GPU through the build (about a minute per extension).

Usage: python3 prebuild.py CANDIDATE.py
Prints one JSON line: {"ok": true} | {"ok": false, "build_error": bool, "error": "..."}.
build_error is true only when the compiler failed; any other failure (a candidate that needs a
GPU at import, say) is left for the evaluation to judge."""

import importlib.util
import json
import os
import subprocess
import sys
import time
import traceback


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    started = time.perf_counter()
    out = {"ok": True}
    real_stdout = os.dup(1)
    os.dup2(2, 1)  # the candidate's and the compiler's output go to stderr
    try:
        spec = importlib.util.spec_from_file_location("kmcts_kb_candidate", sys.argv[1])
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except BaseException as e:  # noqa: BLE001 - SystemExit included
        text = f"{type(e).__name__}: {e}"
        build_error = isinstance(e, subprocess.CalledProcessError) or "Error building extension" in text
        out = {"ok": False, "build_error": build_error, "error": text, "traceback": traceback.format_exc()[-6000:]}
    out["seconds"] = time.perf_counter() - started
    os.write(real_stdout, (json.dumps(out) + "\n").encode())
    os._exit(0)


if __name__ == "__main__":
    main()
