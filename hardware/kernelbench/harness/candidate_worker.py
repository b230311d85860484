"""The candidate's side of kmcts's hardened KernelBench evaluation (hardened.py is the trusted
side): a process of its own that loads the candidate file and builds ModelNew, and never sees
the problem's Model, the reference outputs or the harness's state. Inputs and output slots
arrive from the trusted side as shared tensors (CUDA IPC on a GPU, shared memory on the CPU);
each call's output is copied into a slot the trusted side then checks. Timing is by CUPTI in
this process (kb_timer.py), one window per call.

Messages come as pickled dicts over a multiprocessing Pipe (trusted to untrusted); replies go back
as JSON text only (reply()), which the trusted side parses with a size cap and reads field by
field: nothing this process sends can run code there or set a verdict's fields.
  load {candidate, init_inputs, seed, env[, class, instances]}  the first message: load the
                             file, build ModelNew (the trusted side's own timing process of the
                             reference names class Model), `instances` times (see Instances)
  bind {key, inputs, slots}  keep tensors under a key      unbind {key}
  call {key}                 one call, output to slot 0    quit
  time {keys}                one timed call on each key in turn, each output to its slot 0"""

import importlib.util
import json
import os
import sys
import traceback


class CandidateError(Exception):
    """A failure of the candidate (not of the harness), reported with its stage."""


def error_reply(stage, e):
    reply = {"stage": stage, "error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()[-4000:]}
    if isinstance(e, CandidateError):
        reply.update(error=str(e), wrong_output=True)
    return reply


def reply(conn, message):
    conn.send_bytes(json.dumps(message).encode())


def store(out, slot):
    """Copies a call's output into its slot (callers give the copy a timer window of its own: a
    strided source takes kernels, which after a window would count as strays)."""
    import torch
    if type(out) is not torch.Tensor:  # a subclass could run work in copy_ (outside any window)
        raise CandidateError(f"ModelNew returned {type(out).__name__}, not a plain torch.Tensor")
    if tuple(out.shape) != tuple(slot.shape):
        raise CandidateError(f"output shape {tuple(out.shape)}, expected {tuple(slot.shape)}")
    if out.dtype != slot.dtype:
        raise CandidateError(f"output dtype {out.dtype}, expected {slot.dtype}")
    if out.device != slot.device:
        raise CandidateError(f"output on {out.device}, expected {slot.device}")
    slot.copy_(out)


class Instances:
    """The model built several times over, each from the same seed, and the timed calls in turn
    on each: where a model's weights land in GPU memory moves its time (40_LayerNorm's reference,
    8 copies in one process on the H200: two 1.3% faster than the other six, the same two in a
    second process; bench/results/kb-aa.md). One build per process would make that a draw per
    side; the rotation averages it, alike on both sides. Untimed calls use the first."""

    def __init__(self, models):
        self.models, self.turn = list(models), 0

    def first(self):
        return self.models[0]

    def next(self):
        model = self.models[self.turn % len(self.models)]
        self.turn += 1
        return model


def build_instances(cls, init, seed, device, count):
    """`count` models (at least one: a later build that fails for memory ends the list)."""
    import torch
    models = []
    for k in range(max(1, count)):
        torch.manual_seed(seed)
        if device.type == "cuda":
            torch.cuda.manual_seed(seed)
        try:
            models.append(cls(*init).to(device))
        except Exception as e:  # torch < 2 has no torch.cuda.OutOfMemoryError: by its message too
            out_of_memory = isinstance(e, getattr(torch.cuda, "OutOfMemoryError", ())) or "out of memory" in str(e)
            if k == 0 or not out_of_memory:
                raise
            break
    return Instances(models)


def serve(conn, model, timer, device):
    import torch
    bound = {}
    while True:
        msg = conn.recv()
        op = msg["op"]
        if op == "quit":
            return
        try:
            if op == "bind":
                bound[msg["key"]] = (msg["inputs"], msg["slots"])
                reply(conn, {"ok": True})
            elif op == "unbind":
                bound.pop(msg["key"], None)
                reply(conn, {"ok": True})
            elif op == "call":
                inputs, slots = bound[msg["key"]]
                with torch.no_grad():
                    # In a window of its own (not timed): the kernels of untimed calls must not
                    # count as stray work at the next block's start.
                    _, out = timer.measure(lambda: model.first()(*inputs))
                    # The copy into the slot too (a kernel when the output is strided, as
                    # new_states[:, -1] is): after the window it would be a stray at the next one.
                    timer.measure(lambda: store(out, slots[0]))
                if device.type == "cuda":
                    torch.cuda.synchronize(device)
                reply(conn, {"ok": True})
            elif op == "time":
                reply(conn, time_block(model, timer, bound, msg["keys"], device))  # model: Instances
        except Exception as e:  # the candidate failed (or a CUDA fault): the trusted side decides
            reply(conn, error_reply(op, e))


def time_block(instances, timer, bound, keys, device):
    """One timed call on each key in turn, each on the next of `instances` (Instances)."""
    import torch
    from kernel_table import KernelTable
    samples = []
    table = KernelTable()  # the model calls' kernels per launch (not the copies into the slots)
    with torch.no_grad():
        # Whatever ran since the last block (the trusted side timed the references meanwhile,
        # with this process stopped) counts as stray work.
        drain, _ = timer.measure(lambda: None)
        for key in keys:
            inputs, slots = bound[key]
            model = instances.next()
            timer.flush()
            sample, out = timer.measure(lambda: model(*inputs))
            table.add(timer.kernel_table())
            # In a window of its own, as for an untimed call: a large strided output's copy is
            # several kernels, which would count as strays after the window.
            timer.measure(lambda: store(out, slots[0]))
            samples.append(sample)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        tail, _ = timer.measure(lambda: None)  # the last call's stragglers
    # copy_kernels: copies that ran outside any window (none since each has a window of its own)
    return {"ok": True, "samples": samples, "kernel_table": table.to_json(), "copy_kernels": 0,
            "tail_stray": tail["stray_before"] + drain["stray_before"] + drain["stray_after"]}


def own_roots():
    """Folders whose shared objects are the candidate's own code: its extension folder (torch's
    default when kmcts sets none) and its Triton cache (Triton's launchers are compiled there)."""
    import torch.utils.cpp_extension as ext
    extensions = os.environ.get("TORCH_EXTENSIONS_DIR") or ext.get_default_build_root()
    triton = os.environ.get("TRITON_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".triton", "cache")
    return [extensions, triton]


def attribute(timer):
    """Kernel attribution on; None, or why it is unavailable (the samples then say attributed 0)."""
    try:
        timer.attribute(own_roots())
        return None
    except Exception as e:  # noqa: BLE001 - reported, not fatal: the screen and the checks still hold
        return f"{type(e).__name__}: {e}"


def undumpable():
    """This process's /proc files (memory, environment) closed to processes of its uid without
    privileges: kmcts runs the harness and the candidate processes it starts under one uid, with no
    capabilities (hardware/confine_exec.hpp), so a candidate could otherwise rewrite the trusted
    side's memory. Called first by the trusted side's processes, and by this one before it loads
    its candidate (the reference's timing process stays closed; a candidate may open its own)."""
    import ctypes
    ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0


def die_with_parent(parent):
    """SIGKILL when the trusted side ends (it may be killed at a timeout; this process is in a
    group of its own, which that kill does not reach)."""
    import ctypes
    import signal
    ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # it ended before the line above
        os._exit(1)


def guard(timer_library, parent):
    """Confines this process before anything but Python runs in it (libkmcts_kb_guard.so beside
    the timer library; kb_guard.h). It shares the trusted side's uid and view, so it may write
    only in its own scratch, in /dev/shm, into existing device nodes, and in the folder its extensions are staged in
    (KMCTS_CANDIDATE_WRITABLE, set by kmcts; or torch's and Triton's folders as a harness run by
    hand was given them). From Landlock ABI 6 it may signal only what it starts itself, and what
    it starts stays below it. Its home, temporary files and torch.compile cache move into the
    scratch, so nothing of the trusted side's caches in /tmp is written from here. Returns what
    held, in one line, and the scratch folder (the trusted side removes it)."""
    import ctypes
    import tempfile
    scratch = tempfile.mkdtemp(prefix=SCRATCH_PREFIX)  # a fresh name: nothing a process before it left
    os.environ.update(HOME=scratch, TMPDIR=scratch, TORCHINDUCTOR_CACHE_DIR=os.path.join(scratch, "inductor"))
    tempfile.tempdir = None
    # kmcts names the folder above every candidate's extension folder; a harness run by hand may
    # set torch's and Triton's folders for all its candidates instead.
    named = os.environ.get("KMCTS_CANDIDATE_WRITABLE", "").split(os.pathsep)
    named += [os.environ.get(v, "") for v in ("TORCH_EXTENSIONS_DIR", "TRITON_CACHE_DIR")]
    # /dev/shm too: receiving a CUDA tensor writes there (torch's IPC reference counts; without
    # it every candidate's process died at its first bind on the H200).
    writable = [scratch, "/dev/shm"] + [p for p in named if p]
    for folder in writable[2:]:  # a rule names a folder that exists (ext_stage keeps it)
        os.makedirs(folder, mode=0o700, exist_ok=True)
    library = os.path.join(os.path.dirname(os.path.abspath(timer_library)), "libkmcts_kb_guard.so")
    if not os.path.exists(library):
        return f"none ({library} not found)", scratch
    report = ctypes.create_string_buffer(1024)
    # Existing files to write: the device nodes, and its own /proc files (the CUDA driver writes
    # one as it starts: without it cudaGetDeviceCount fails with error 304 on the H200).
    status = ctypes.CDLL(library).kmcts_kb_guard("\n".join(writable).encode(), b"/dev\n/proc/self", int(parent),
                                                 report, ctypes.c_size_t(len(report)))
    text = report.value.decode(errors="replace")
    return (text if status == 0 else f"failed: {text}"), scratch


SCRATCH_PREFIX = "kmcts-candidate-"


def run(conn, device_arg, timer_library, parent):
    """Entry point in the spawned process. It readies torch, the device and the timer, then
    waits for its one candidate: load {candidate, init_inputs, seed, env} (a warm harness starts
    the next candidate's process while the current one is judged; the process serves one
    candidate and ends)."""
    os.setpgrp()  # a group of its own: whatever the candidate starts is stopped and killed with it
    die_with_parent(parent)
    undumpable()
    os.dup2(2, 1)  # the candidate's prints must not reach the trusted side's stdout
    sys.stdout = sys.stderr
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)  # nor may it read the warm harness's requests
    os.close(null)
    # Confined before torch starts a thread, and said before any candidate code runs here.
    try:
        held, scratch = guard(timer_library, parent)
    except OSError as e:  # its folders could not be made: said, and the evaluation goes on unguarded
        held, scratch = f"failed: {e}", ""
    reply(conn, {"ok": True, "guard": held, "scratch": scratch})
    import torch
    import torch.multiprocessing  # noqa: F401 - tensors arrive as shared handles
    from kb_timer import make_timer
    device = torch.device("cpu") if device_arg == "cpu" else torch.device(f"cuda:{int(device_arg)}")
    timer, timer_error = None, None
    try:
        if device.type == "cuda":
            torch.cuda.set_device(device)
        timer = make_timer(device, timer_library)
    except Exception as e:  # reported once the trusted side asks (ours, not the candidate's)
        timer_error = e
    msg = conn.recv()
    if msg.get("op") != "load":
        return
    if timer_error is not None:
        reply(conn, error_reply("timer", timer_error))
        return
    # The candidate's own extension folder and architectures (torch reads them at build time).
    os.environ.update({str(k): str(v) for k, v in msg.get("env", {}).items()})
    attribution_error = attribute(timer)  # before the candidate's code runs: it cannot subscribe first
    candidate_path, init_inputs, seed = msg["candidate"], msg["init_inputs"], msg["seed"]
    try:
        spec = importlib.util.spec_from_file_location("kmcts_kb_candidate", candidate_path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        cls = getattr(module, msg.get("class", "ModelNew"))
    except BaseException as e:  # noqa: BLE001 - SystemExit from a build failure included
        reply(conn, error_reply("load", e))
        return
    try:
        init = [v.to(device) if isinstance(v, torch.Tensor) else v for v in init_inputs]
        model = build_instances(cls, init, seed, device, int(msg.get("instances", 1)))
    except Exception as e:
        reply(conn, error_reply("init", e))
        return
    reply(conn, {"ok": True, "ready": True, "attribution_error": attribution_error, "instances": len(model.models)})
    serve(conn, model, timer, device)
