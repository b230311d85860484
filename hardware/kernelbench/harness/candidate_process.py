"""The trusted side's handle on a candidate's process (candidate_worker.py runs in it) and what a
warm harness keeps between evaluations (serve.py). Used by hardened.py."""

import json
import os
import signal

from faithful import SEED, load_module, set_seed


def proc_stat(pid):
    """(state, parent) of process `pid` from /proc/PID/stat (its name may hold spaces and
    parentheses: the fields start after the last ")"); None when it is gone or unreadable."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return fields[0].decode(), int(fields[1])
    except (OSError, ValueError, IndexError):
        return None


def descendants(root):
    """`root` and every live process below it, from /proc (parents read from each stat line)."""
    children = {}
    for entry in os.listdir("/proc"):
        stat = proc_stat(entry) if entry.isdigit() else None
        if stat is not None:
            children.setdefault(stat[1], []).append(int(entry))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def settle(pids, limit_s=0.5):
    """Waits (at most limit_s) until each of `pids` has stopped or ended: a signal takes effect
    when its process next runs, which on a loaded machine may be a while after kill() returns."""
    import time
    deadline = time.monotonic() + limit_s
    for pid in pids:
        while time.monotonic() < deadline:
            stat = proc_stat(pid)
            if stat is None or stat[0] in ("T", "t", "Z", "X"):  # stopped, or gone
                break
            time.sleep(0.001)


def send(pid, number):
    try:
        os.kill(pid, number)
    except OSError:
        pass


class Verdict(Exception):
    """Ends the evaluation with these keys in the result."""

    def __init__(self, **fields):
        super().__init__(fields.get("error") or fields.get("rejected") or "verdict")
        self.fields = fields


REPLY_LIMIT = 4 << 20  # bytes of one reply from the candidate's process
SAMPLE_FIELDS = ("union_ns", "window_ns", "kernels", "memcpys", "memsets", "streams", "stray_before", "stray_after",
                 "own_ns", "library_ns", "unknown_ns", "own_kernels", "library_kernels", "unknown_kernels", "attributed")
MAX_LIBRARY_OBJECTS = 64  # launching objects listed per sample


class Child:
    """The candidate's process and the pipe to it. Its replies are JSON text read field by field:
    nothing it sends can run code here or set a verdict's fields."""

    def __init__(self, device, timer_lib, call_timeout=60.0):
        """Starts the process (torch, the device and the timer get ready there); load() gives
        it its candidate. A warm harness (serve.py) starts the next one ahead."""
        import torch.multiprocessing as mp
        import candidate_worker
        ctx = mp.get_context("spawn")
        self.conn, child_conn = ctx.Pipe()
        self.timeout = call_timeout
        self.proc = ctx.Process(target=candidate_worker.run, daemon=True,
                                args=(child_conn, device, timer_lib, os.getpid()))
        self.proc.start()
        child_conn.close()

    def load(self, candidate, init_inputs, env, cls="ModelNew", instances=1):
        """Sends the process its file: ModelNew of a candidate, or Model of the problem itself for
        the reference's timing process (hardened.py, --eager-process child); the class is built
        `instances` times (candidate_worker.Instances)."""
        import torch
        # Copies: tensors sent to it are shared, and a warm harness keeps the originals for the
        # next candidates (and, on the CPU, the reference's own weights may be them).
        init_inputs = [v.clone() if isinstance(v, torch.Tensor) else v for v in init_inputs]
        # Its first word, sent before it had any candidate's code: what confines it, and its scratch.
        start = self.ask(None, stage="start")
        self.guard = str(start.get("guard", ""))[:500]
        self.scratch = start.get("scratch") if isinstance(start.get("scratch"), str) else ""
        try:
            self.conn.send({"op": "load", "candidate": os.path.abspath(candidate), "init_inputs": init_inputs,
                            "seed": SEED, "env": env, "class": cls, "instances": instances})
        except (OSError, ValueError):
            raise self.died("load") from None

    def died(self, during):
        self.proc.join(5)
        code = self.proc.exitcode
        how = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        return Verdict(error=f"the candidate's process died ({how}) during {during}")

    def ask(self, msg, timeout=None, stage=None):
        during = stage or msg["op"]
        if msg is not None:
            try:
                self.conn.send(msg)
            except (OSError, ValueError):
                raise self.died(during) from None
        limit = self.timeout if timeout is None else timeout
        if not self.conn.poll(limit):
            self.kill()
            raise Verdict(timeout=True, error=f"the candidate gave no answer within {limit:g} s ({during})")
        try:
            raw = self.conn.recv_bytes(REPLY_LIMIT)
        except (EOFError, ConnectionError):
            raise self.died(during) from None
        except OSError:  # longer than the limit
            self.kill()
            raise Verdict(rejected=f"the candidate's process sent an oversized reply during {during}") from None
        try:
            reply = json.loads(raw)
            if not isinstance(reply, dict):
                raise ValueError("not an object")
        except ValueError:
            self.kill()
            raise Verdict(rejected=f"the candidate's process sent a malformed reply during {during}") from None
        if "error" in reply:
            text = str(reply.get("error"))[:4000]
            where = str(reply.get("stage", during))
            if reply.get("wrong_output") is True:
                raise Verdict(correct=False, wrong_answer=text)
            if where == "timer":
                raise RuntimeError(f"the candidate process's CUPTI timer: {text}")  # ours, not the candidate's
            raise Verdict(error=text, stage=where, traceback=str(reply.get("traceback", ""))[-4000:])
        if reply.get("ok") is not True:
            self.kill()
            raise Verdict(rejected=f"the candidate's process sent a reply without ok during {during}")
        return reply

    def pause(self, stopped, tree=True):
        """SIGSTOP while the trusted side times the references (nothing of the candidate runs
        meanwhile, nor anything it started), SIGCONT after. tree=False: its group only, for a
        process that has run no candidate's code (a spare, the reference's timing process),
        where the walk through /proc would only add its milliseconds to a timed block's wall."""
        self.signal(signal.SIGSTOP if stopped else signal.SIGCONT, tree)

    def signal(self, number, tree=True, spare_root=False):
        """To the candidate's process group (it makes its own at start), or to the process while
        it has not yet, and to every process below it: one may have moved into a group of its
        own, but stays below the candidate's process, a subreaper (kb_guard.h). Stopped
        processes start nothing, so the walk is repeated until it finds none new; a kill stops
        the tree first (a process killed first would hand its children to the namespace's init)."""
        reached = set()
        alive = self.proc.pid is not None and self.proc.exitcode is None  # not reaped: its pid is its own
        for _ in range(50 if alive and tree else 0):
            tree = set(descendants(self.proc.pid)) - reached - ({self.proc.pid} if spare_root else set())
            if not tree:
                break
            for pid in tree:
                send(pid, signal.SIGSTOP if number == signal.SIGKILL else number)
            reached |= tree
            if number == signal.SIGCONT:
                break  # nothing to chase: what it starts now runs anyway
        try:
            if not spare_root:
                os.killpg(self.proc.pid, number)
        except OSError:
            if alive and not tree:  # before it made its group (the walk reached it otherwise)
                send(self.proc.pid, number)
        if number == signal.SIGKILL:
            for pid in reached:
                send(pid, number)
        elif number == signal.SIGSTOP:
            settle(reached)

    def kill(self):
        self.signal(signal.SIGKILL)  # its leftovers too: none may run into a later evaluation
        self.proc.join(5)
        self.remove_scratch()

    def remove_scratch(self):
        """Its scratch folder, as its start message named it (before any candidate code ran),
        removed whatever was done to its modes; only a folder of that name in the temporary folder."""
        import tempfile
        from candidate_worker import SCRATCH_PREFIX
        from ext_stage import _remove
        scratch = getattr(self, "scratch", "")
        if scratch and os.path.dirname(scratch) == tempfile.gettempdir() and \
                os.path.basename(scratch).startswith(SCRATCH_PREFIX):
            try:
                _remove(scratch)
            except OSError:
                pass

    def close(self):
        """Ends the process: what it started first (found below it while it lives), then the
        process itself by its quit message, so that it lets go of the tensors it was sent (a
        process killed keeps torch's IPC references, and the trusted side's memory with them),
        then whatever is left."""
        self.pause(False)
        self.signal(signal.SIGKILL, spare_root=True)
        try:
            self.conn.send({"op": "quit"})
        except (OSError, ValueError):
            pass
        self.proc.join(10)
        self.kill()


def checked_samples(reply, count):
    """The timing reply's samples, each a dict of non-negative integers; Verdict otherwise."""
    samples = reply.get("samples")
    ok = isinstance(samples, list) and len(samples) == count
    for x in samples if ok else []:
        ok = ok and isinstance(x, dict) and all(isinstance(x.get(f), int) and x[f] >= 0 for f in SAMPLE_FIELDS)
        ok = ok and x["attributed"] in (0, 1) and (x["attributed"] == 0 or x["own_kernels"] + x["library_kernels"]
                                                   + x["unknown_kernels"] == x["kernels"])
        objects = x.get("library_objects", {}) if ok else None
        ok = ok and isinstance(objects, dict) and len(objects) <= MAX_LIBRARY_OBJECTS and all(
            isinstance(k, str) and len(k) < 256 and isinstance(v, list) and len(v) == 2
            and all(isinstance(n, int) and n >= 0 for n in v) for k, v in objects.items())
    for f in ("copy_kernels", "tail_stray"):
        ok = ok and isinstance(reply.get(f), int) and reply[f] >= 0
    if not ok:
        raise Verdict(rejected="the candidate's process sent a malformed timing reply")
    return samples


class Warm:
    """What outlives one evaluation in a warm harness (serve.py): the CUPTI timer, each problem's
    module, init inputs and reference Model (built once, seeded as always), its torch.compile,
    and the next evaluation's processes (the candidate's, and the reference's timing process),
    started ahead. A one-shot run gets a fresh one."""

    def __init__(self, spares=False):
        """spares: start the next evaluation's process of a role as soon as one is taken, so that
        it gets ready while the current candidate is judged (serve.py)."""
        self.timers, self.problems, self.compiled, self.spares, self.keep_spares = {}, {}, {}, {}, spares
        self.shared_pool = None  # the evaluation's pool of tensors shared with its processes (hardened.shared_pool)

    def timer(self, device, library):
        from kb_timer import make_timer
        key = (str(device), library)
        if key not in self.timers:
            self.timers[key] = make_timer(device, library)
        return self.timers[key]

    def reference(self, path, device):
        import torch
        key = (os.path.abspath(path), os.path.getmtime(path), str(device))
        if key not in self.problems:
            problem = load_module(path, "kmcts_kb_problem")
            set_seed(SEED)
            init = problem.get_init_inputs()
            set_seed(SEED)
            reference = problem.Model(*[v.to(device) if isinstance(v, torch.Tensor) else v for v in init]).to(device)
            self.problems[key] = (problem, init, reference)
        return self.problems[key]

    def compile(self, reference):
        import torch
        if id(reference) not in self.compiled:
            self.compiled[id(reference)] = torch.compile(reference)  # inductor, default mode
        return self.compiled[id(reference)]

    def child(self, args, role="candidate"):
        """A fresh process for `role` (candidate, or reference: the reference's timing process),
        the spare when one is ready."""
        key = (args.device, args.timer_lib)
        spare = self.spares.pop(role, None)
        if spare is not None and spare.proc.is_alive() and spare.key == key:
            spare.timeout = args.call_timeout
            child = spare
        else:
            if spare is not None:
                spare.kill()
            child = Child(args.device, args.timer_lib, args.call_timeout)
            child.key = key
        if self.keep_spares:
            self.start_spare(*key, role=role)
        return child

    def pause_spare(self, stopped):
        """The spares stopped while a candidate is timed: their start (imports, a CUDA context)
        must not disturb the measurement."""
        for spare in self.spares.values():
            spare.pause(stopped, tree=False)

    def start_spare(self, device, timer_lib, role="candidate"):
        if role not in self.spares:
            self.spares[role] = Child(device, timer_lib)
            self.spares[role].key = (device, timer_lib)
