"""Static screening of a KernelBench candidate's source (hardened mode): what no runtime trace
can show, each recorded as a finding with its line. Torch-free (Python's ast and text search),
tested in CI (tests/python/test_kb_screen.py).

Who did the work is judged at run time, not here: the timed calls' kernels are attributed to
the candidate or to a library (kernel attribution, hardened.py's --library-policy). So library
use in the source (matmul, conv, softmax, nn.Linear or nn.LayerNorm kept to hold parameters,
cuBLAS in the embedded C++) is only noted ("notes", rule library_compute) and never flags a
candidate.

Rules that flag:
  try_fallback        - a try/except whose handler computes something (a fallback to torch
                        when the custom kernel fails)
  streams             - streams created in Python or in the embedded CUDA/C++ source
  threads             - threads or processes (Python threading/multiprocessing/futures, or
                        std::thread / pthread_create in the embedded source)
  monkey_patching     - assignment to an attribute of torch, a torch submodule or another
                        module (torch.allclose = ..., setattr(torch, ...))
  frame_introspection - inspect, sys._getframe, gc.get_objects, f_back/f_locals/f_globals
  timer_patching      - the timers a harness uses reassigned (torch.cuda.Event, elapsed_time,
                        synchronize, time.perf_counter, time.time)
  process_escape      - ways to take over the evaluating process or leave it: file descriptors
                        and low-level os calls, sockets, ctypes, pickle, subprocesses, signals,
                        sys.modules, dynamic imports and code (__import__, importlib, eval, exec,
                        compile), getattr with a computed name
  filesystem_write    - files written, moved or removed (open() for writing, os.remove/rename/...,
                        shutil, pathlib's write_text/unlink/...): a candidate runs as the user
                        that runs kmcts and could rewrite the harness or another's cached files

Usage: python3 screen.py CANDIDATE.py   (prints one JSON line)"""

import ast
import json
import re
import sys

COMPUTE_OPS = {
    "matmul", "mm", "bmm", "addmm", "baddbmm", "einsum", "tensordot", "linear", "bilinear",
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "softmax", "log_softmax", "layer_norm", "group_norm", "batch_norm", "instance_norm",
    "scaled_dot_product_attention", "cross_entropy", "nll_loss", "mse_loss", "cumsum", "cumprod",
    "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
}
COMPUTE_LAYERS = {
    "Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
    "ConvTranspose3d", "LayerNorm", "GroupNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d",
    "InstanceNorm2d", "MultiheadAttention", "LSTM", "GRU", "RNN", "Softmax", "MaxPool2d", "AvgPool2d",
}
TIMER_NAMES = {"Event", "elapsed_time", "synchronize", "perf_counter", "perf_counter_ns", "time", "monotonic"}
THREAD_MODULES = {"threading", "multiprocessing", "concurrent", "_thread"}
ESCAPE_MODULES = {"socket", "ctypes", "pickle", "subprocess", "signal", "importlib", "builtins", "mmap", "fcntl",
                  "marshal", "sysconfig", "_posixsubprocess", "resource"}
ESCAPE_CALLS = {"__import__", "eval", "exec", "compile", "globals", "vars", "breakpoint"}
ESCAPE_OS = {"fstat", "write", "read", "dup", "dup2", "fdopen", "kill", "fork", "forkpty", "system", "popen",
             "execv", "execve", "execvp", "spawnv", "pipe", "open", "close", "killpg", "setsid", "_exit", "lseek"}
FS_OS = {"remove", "unlink", "rename", "renames", "replace", "makedirs", "mkdir", "rmdir", "removedirs", "symlink",
         "link", "chmod", "chown", "truncate", "utime", "mkfifo"}
FS_METHODS = {"write_text", "write_bytes", "unlink", "touch", "mkdir", "rmdir", "symlink_to", "hardlink_to",
              "chmod", "rmtree"}
INTROSPECTION_ATTRS = {"_getframe", "get_objects", "get_referrers", "f_back", "f_locals", "f_globals", "currentframe", "stack"}
SOURCE_PATTERNS = [  # in embedded CUDA/C++ source strings
    ("streams", re.compile(r"cudaStreamCreate|cudaStream_t\s+\w+\s*;|at::cuda::getStreamFromPool")),
    ("threads", re.compile(r"std::thread|pthread_create|std::async")),
    ("library_compute", re.compile(r"cublas\w*[Gg]emm\w*|cublasLt|cudnn\w+Forward|at::(matmul|mm|bmm|conv\w*|softmax|linear)\b|torch::(matmul|mm|bmm|conv\w*|softmax|linear)\b")),
]


def dotted(node):
    """'torch.nn.functional.softmax' for an attribute chain, '' otherwise."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def module_aliases(tree):
    """Names bound to imported modules (torch, F, nn, time, ...): assignments to their
    attributes patch a module, assignments to other objects' attributes (self.x) do not."""
    names = {"torch", "time", "sys", "builtins"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.update(a.asname or a.name for a in node.names)
    return names


class Screener(ast.NodeVisitor):
    def __init__(self, modules):
        self.findings = []
        self.modules = modules

    def add(self, rule, node, detail):
        self.findings.append({"rule": rule, "line": getattr(node, "lineno", 0), "detail": detail})

    def imported(self, module, node):
        root = module.split(".")[0]
        if root in THREAD_MODULES:
            self.add("threads", node, f"imports {module}")
        if root in ("inspect", "gc"):
            self.add("frame_introspection", node, f"imports {module}")
        if root in ESCAPE_MODULES:
            self.add("process_escape", node, f"imports {module}")
        if root == "shutil":
            self.add("filesystem_write", node, f"imports {module}")

    def visit_Import(self, node):
        for alias in node.names:
            self.imported(alias.name, node)
        self.generic_visit(node)

    def visit_ImportFrom(self, node):
        self.imported(node.module or "", node)
        self.generic_visit(node)

    def visit_Call(self, node):
        name = dotted(node.func)
        last = name.rsplit(".", 1)[-1] if name else (node.func.attr if isinstance(node.func, ast.Attribute) else "")
        if last in COMPUTE_OPS and (name.startswith(("torch", "F.", "nn.")) or not name or "." in name):
            self.add("library_compute", node, f"calls {name or last}")
        if last in COMPUTE_LAYERS and name.startswith(("nn.", "torch.nn.")):
            self.add("library_compute", node, f"builds {name}")
        if name in ("torch.cuda.Stream", "torch.cuda.stream") or last == "Stream" and "cuda" in name:
            self.add("streams", node, f"calls {name}")
        if name == "setattr" and node.args and dotted(node.args[0]).split(".")[0] in ("torch", "time", "F", "nn"):
            self.add("monkey_patching", node, f"setattr on {dotted(node.args[0])}")
        if last in INTROSPECTION_ATTRS and name.split(".")[0] in ("sys", "inspect", "gc"):
            self.add("frame_introspection", node, f"calls {name}")
        if name in ESCAPE_CALLS or (name.startswith("os.") and last in ESCAPE_OS):
            self.add("process_escape", node, f"calls {name}")
        if name == "open" and self.opens_for_writing(node):
            self.add("filesystem_write", node, "opens a file for writing")
        elif (name.startswith("os.") and last in FS_OS) or (isinstance(node.func, ast.Attribute) and last in FS_METHODS):
            self.add("filesystem_write", node, f"calls {name or '.' + last}")
        if name in ("getattr", "setattr", "delattr") and len(node.args) >= 2 and not isinstance(node.args[1], ast.Constant):
            self.add("process_escape", node, f"{name} with a computed attribute name")
        self.generic_visit(node)

    @staticmethod
    def opens_for_writing(node):
        """open(path, mode): a mode that writes, or one not written out as a constant."""
        mode = node.args[1] if len(node.args) >= 2 else next((k.value for k in node.keywords if k.arg == "mode"), None)
        if mode is None:
            return False
        if not (isinstance(mode, ast.Constant) and isinstance(mode.value, str)):
            return True
        return any(c in mode.value for c in "wax+")

    def visit_Attribute(self, node):
        if node.attr in ("f_back", "f_locals", "f_globals"):
            self.add("frame_introspection", node, f"reads .{node.attr}")
        if dotted(node) in ("sys.modules", "sys.stdout.fileno", "sys.stdin", "os.environ") or node.attr in (
                "__builtins__", "__globals__", "__code__", "__subclasses__", "__dict__"):
            self.add("process_escape", node, f"reads {dotted(node) or '.' + node.attr}")
        self.generic_visit(node)

    def check_target(self, target, node):
        name = dotted(target)
        if not name or "." not in name:
            return
        root, last = name.split(".")[0], name.rsplit(".", 1)[-1]
        if root not in self.modules:
            return
        if last in TIMER_NAMES and root in ("torch", "time"):
            self.add("timer_patching", node, f"assigns {name}")
        else:
            self.add("monkey_patching", node, f"assigns {name}")

    def visit_Assign(self, node):
        for t in node.targets:
            self.check_target(t, node)
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        self.check_target(node.target, node)
        self.generic_visit(node)

    def visit_Try(self, node):
        for handler in node.handlers:
            computes = any(isinstance(n, ast.Call) for stmt in handler.body for n in ast.walk(stmt)
                           if not (isinstance(n, ast.Call) and dotted(n.func) in ("print", "logging.warning", "warnings.warn")))
            if computes:
                self.add("try_fallback", handler, "an except handler computes (a fallback when the kernel fails?)")
        self.generic_visit(node)

    def visit_Constant(self, node):
        if isinstance(node.value, str) and len(node.value) > 40:
            for rule, pattern in SOURCE_PATTERNS:
                for m in pattern.finditer(node.value):
                    self.add(rule, node, f"embedded source uses {m.group(0)}")
        self.generic_visit(node)


NOTE_RULES = {"library_compute"}  # recorded, never a flag: the runtime attribution judges library use


def screen_source(source):
    """{"verdict": "clean" | "flagged" | "unparsable", "findings": [...], "notes": [...]} for
    candidate source text; notes are library_compute findings, which never flag."""
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        return {"verdict": "unparsable", "findings": [{"rule": "syntax", "line": e.lineno or 0, "detail": str(e)}]}
    s = Screener(module_aliases(tree))
    s.visit(tree)
    found = sorted(s.findings, key=lambda f: (f["line"], f["rule"]))
    findings = [f for f in found if f["rule"] not in NOTE_RULES]
    notes = [f for f in found if f["rule"] in NOTE_RULES]
    return {"verdict": "flagged" if findings else "clean", "findings": findings, "notes": notes}


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with open(sys.argv[1], encoding="utf-8") as f:
        result = screen_source(f.read())
    result["candidate"] = sys.argv[1]
    print(json.dumps(result))


if __name__ == "__main__":
    main()
