"""A warm KernelBench harness process (issue 6, speed of evaluation): it imports torch and readies
the GPU once, then evaluates candidates sent to it one request at a time, so an evaluation does
not pay Python's and CUDA's start-up (seconds per side) before its work.

Usage: python3 serve.py --mode hardened|faithful [--device 0|cpu] [--timer-lib SO]
Requests, one JSON object per line on stdin:
  {"argv": [the one-shot harness's arguments: --problem P --candidate C ...],
   "env": {variables for the candidate: TORCH_EXTENSIONS_DIR, TORCH_CUDA_ARCH_LIST, CXX, ...}}
Replies, one line each, on this process's own copy of stdout (fd 1 then points at stderr, so
nothing a candidate or torch prints can reach it): the one-shot harness's JSON line, plus
"served" (requests this process answered), "retire" (true: this process ends after the reply)
and "nonce", the request's own, which kmcts checks: a line written into this process's output
by anything else (a candidate that found the descriptor) does not carry it.

- hardened: the trusted side is reused until it faults (an error of its own, or its CUDA
  context fails a check after the evaluation) or an evaluation leaves shared GPU memory behind
  (settle()); it keeps the CUPTI timer, each problem's
  reference Model and its torch.compile. Every candidate still gets a process of its own, new
  for it: the next one is started (torch imported, CUDA and the timer ready) when the current
  one is taken, and gets ready while the current candidate is judged.
- faithful: KernelBench's protocol runs the candidate inside the harness, where it can patch
  torch or fault the context, so a process serves one candidate; kmcts starts the next one
  ahead and it waits here, torch imported, for its request."""

import argparse
import json
import os
import sys
import traceback


def reply_channel():
    """This process's replies go to a private copy of stdout; fd 1 becomes stderr."""
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return out


def requests():
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            if not isinstance(request, dict) or not isinstance(request.get("argv"), list):
                raise ValueError("not an object with an argv list")
            yield request, None
        except ValueError as e:
            yield None, f"malformed request: {e}"


def unreleased_note(nbytes):
    """The result's note when shared tensors outlived the candidate's process."""
    size = f"{nbytes / 2 ** 30:.2f} GiB" if nbytes >= 2 ** 30 else f"{nbytes / 2 ** 20:.3g} MiB"
    return (f"{size} of tensors shared with the candidate's process were not released (a process killed "
            "while holding them); the harness retires")


def settle(device_arg, warm, result):
    """After an evaluation: True if the trusted side's CUDA context still works (a fault poisons
    it for good) and the evaluation left nothing behind on the GPU. What it used goes back:
    Python's garbage; the tensors it shared with the candidate's process, which torch keeps
    (its CUDA IPC "limbo") when the harness dropped them while that process still held them,
    until torch.cuda.ipc_collect() finds them released; then the allocator's cache, so that
    the next candidate's own process finds the GPU as free as the first did. A process killed
    while it held shared tensors never releases them: what is still allocated in the
    evaluation's shared pool is reported, and the harness retires (a fresh one starts with
    none). The result's harness_gpu_memory_gib gets what the harness holds afterwards."""
    pool, warm.shared_pool = warm.shared_pool, None
    if device_arg == "cpu":
        return True
    try:
        import gc
        import torch
        from hardened import pool_allocated
        torch.cuda.synchronize(int(device_arg))
        gc.collect()
        torch.cuda.ipc_collect()
        try:  # a torch whose snapshot does not name pools: nothing found stuck, said once per result
            stuck = pool_allocated(torch.cuda.memory_snapshot(), pool.id) if pool is not None else 0
        except (AttributeError, KeyError, TypeError, ValueError) as e:
            stuck = 0
            result.setdefault("notes", []).append(f"shared pool not checked: {type(e).__name__}: {e}")
        del pool
        torch.cuda.empty_cache()
        memory = result.setdefault("harness_gpu_memory_gib", {})
        memory.update(held_after=torch.cuda.memory_reserved(int(device_arg)) / 2 ** 30)
        if stuck:
            memory.update(shared_not_released=stuck / 2 ** 30)
            result.setdefault("notes", []).append(unreleased_note(stuck))
        return not stuck
    except Exception:  # noqa: BLE001 - any failure retires the process
        return False


def end_strays():
    """Kills what a candidate left running in this harness's process namespace. A candidate's
    process is killed with its process group, but one that moved a child into a group of its own
    (the harness's filter lets ninja set process groups) leaves it behind, and in a warm harness
    it would live on into later evaluations: it could rewrite a later candidate's staged
    extension or the shared tensors. Such a process is an orphan, adopted by the namespace's init
    (kmcts-ns-init, pid 1), while everything the harness keeps (the spares, multiprocessing's
    helpers) is its own child; so every process whose parent is pid 1, but this one, goes, until
    none is left. Only inside kmcts's process namespace (this process is its pid 2 under
    kmcts-ns-init): anywhere else pid 1 is the host's init, whose orphans are not ours. Returns
    how many were killed."""
    import signal
    from candidate_process import proc_stat
    try:
        with open("/proc/1/comm") as f:
            if f.read().strip() != "kmcts-ns-init" or os.getppid() != 1:
                return 0
    except OSError:
        return 0
    killed = 0
    for _ in range(16):  # a killed orphan's own children are orphans next round
        found = 0
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) in (1, os.getpid()):
                continue
            stat = proc_stat(entry)
            if stat is not None and stat[0] != "Z" and stat[1] == 1:
                try:
                    os.kill(int(entry), signal.SIGKILL)
                    found += 1
                except OSError:
                    pass
        killed += found
        if not found:
            break
        import time
        time.sleep(0.05)
    return killed


def ready(device_arg):
    """torch imported and the GPU's context made before any request: the start-up hidden."""
    import torch
    if device_arg != "cpu":
        torch.cuda.set_device(int(device_arg))
        torch.cuda.synchronize()


def serve_hardened(channel, device_arg, timer_lib):
    import hardened
    from candidate_process import Warm
    from ext_stage import unstage_extensions
    ready(device_arg)
    warm = Warm(spares=True)
    warm.start_spare(device_arg, timer_lib)
    served = 0
    for request, problem in requests():
        if problem:
            channel.write(json.dumps({"mode": "hardened", "infra_error": problem, "served": served, "retire": True}) + "\n")
            channel.flush()
            return
        served += 1
        try:
            args = hardened.make_parser().parse_args([str(a) for a in request["argv"]])
        except SystemExit:
            channel.write(json.dumps({"mode": "hardened", "infra_error": f"bad harness arguments: {request['argv']}",
                                      "served": served, "retire": True, "nonce": request.get("nonce")}) + "\n")
            channel.flush()
            return
        env = {str(k): str(v) for k, v in request.get("env", {}).items()}
        result = json.loads(hardened.evaluate_line(args, warm, env))
        strays = end_strays()
        try:
            unstage_extensions(env)
        except OSError as e:  # the next staging starts from scratch anyway; a failure there is judged
            result.setdefault("notes", []).append(f"staged extensions not removed: {e}")
        if strays:
            result["strays_killed"] = strays
        retire = not settle(args.device, warm, result) or "infra_error" in result
        result.update(served=served, retire=retire, nonce=request.get("nonce"))
        channel.write(json.dumps(result) + "\n")
        channel.flush()
        if retire:
            return


def serve_faithful(channel, device_arg):
    import faithful
    ready(device_arg)
    for request, problem in requests():
        if problem:
            result = {"mode": "faithful", "infra_error": problem}
        else:
            os.environ.update({str(k): str(v) for k, v in request.get("env", {}).items()})
            try:
                args = faithful.make_parser().parse_args([str(a) for a in request["argv"]])
            except SystemExit:
                args = None
            if args is None:
                result = {"mode": "faithful", "infra_error": f"bad harness arguments: {request['argv']}"}
            else:
                try:
                    result = json.loads(faithful.evaluate_line(args))
                except SystemExit as e:  # the candidate called exit() while loading or running
                    result = {"mode": "faithful", "compiled": True, "correct": False,
                              "error": f"the candidate called exit({e.code})"}
        result.update(served=1, retire=True, nonce=(request or {}).get("nonce"))
        channel.write(json.dumps(result) + "\n")
        channel.flush()
        return


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", required=True, choices=("hardened", "faithful"))
    parser.add_argument("--device", default="0", help="the GPU the requests will name, readied ahead; or cpu")
    parser.add_argument("--timer-lib", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                            "libkmcts_kb_timer.so"),
                        help="hardened: the CUPTI library the requests will name")
    opts = parser.parse_args()
    mode = opts.mode
    if mode == "hardened":
        from candidate_worker import undumpable
        undumpable()
    channel = reply_channel()
    try:
        if mode == "hardened":
            serve_hardened(channel, opts.device, opts.timer_lib)
        else:
            serve_faithful(channel, opts.device)
    except Exception as e:  # noqa: BLE001 - said once, then the process ends
        channel.write(json.dumps({"mode": mode, "infra_error": f"{type(e).__name__}: {e}",
                                  "traceback": traceback.format_exc()[-4000:], "retire": True}) + "\n")
        channel.flush()
    os._exit(0)  # extensions, compile workers and the spare candidate process must not delay the exit


if __name__ == "__main__":
    main()
