# Which confinement of a spawned child keeps CUDA IPC (torch.multiprocessing, spawn) working, in
# both directions (a tensor of the child's to the parent, the parent's to the child), and a CPU
# tensor through shared memory, and what the child can still read of its parent (/proc environ,
# mem) or reach (the network)? One JSON line per run; bench/security/ipc_probe.sh runs the grid on
# a GPU host as root (issue 28; the figures in bench/results/confinement.md).
# Usage: python3 ipc_probe.py MODE ; MODE combines letters:
#   n: the parent not dumpable   u: the parent drops to uid 3000100 before torch (the child inherits it)
#   w: the child started through the wrapper $WRAP (unshare / setpriv), described by $WRAP_DESC
#   x: nothing of these
import ctypes, json, os, sys

def child(conn):
    import torch
    out = {"uid": os.getuid(), "dumpable": None}
    try:
        r = torch.full((4,), 7.0, device="cuda")
        conn.send(r)  # child -> parent
        out["sent"] = True
    except Exception as e:
        out["send_error"] = repr(e)
    try:
        t = conn.recv()  # parent -> child
        t.add_(1)
        torch.cuda.synchronize()
        out["import_ok"] = True
    except Exception as e:
        out["import_error"] = repr(e)[:300]
    try:
        c = conn.recv()  # a CPU tensor: shared memory, its fd through multiprocessing's resource sharer
        out["cpu_sum"] = float(c.sum())
    except Exception as e:
        out["cpu_error"] = repr(e)[:300]
    try:
        out["read_parent_environ"] = len(open(f"/proc/{os.getppid()}/environ", "rb").read())
    except Exception as e:
        out["read_parent_environ"] = repr(e)[:100]
    try:
        open(f"/proc/{os.getppid()}/mem", "rb").close(); out["open_parent_mem"] = True
    except Exception as e:
        out["open_parent_mem"] = repr(e)[:100]
    try:
        import socket; socket.create_connection(("1.1.1.1", 53), timeout=2); out["net"] = True
    except Exception as e:
        out["net"] = repr(e)[:80]
    conn.send(out)
    conn.recv()

if __name__ == "__main__":
    mode = sys.argv[1]
    if "u" in mode:
        os.setgroups([]); os.setresgid(3000100, 3000100, 3000100); os.setresuid(3000100, 3000100, 3000100)
    if "n" in mode:
        ctypes.CDLL(None).prctl(4, 0)  # PR_SET_DUMPABLE 0
    import torch, torch.multiprocessing as mp
    ctx = mp.get_context("spawn")
    if "w" in mode:
        ctx.set_executable(os.environ["WRAP"])
    a, b = ctx.Pipe()
    p = ctx.Process(target=child, args=(b,), daemon=True)
    p.start()
    res = {"mode": mode, "wrap": os.environ.get("WRAP_DESC", "") if "w" in mode else ""}
    try:
        r = a.recv()
        res["parent_got_child_tensor"] = r.tolist()
    except Exception as e:
        res["parent_import_error"] = repr(e)[:300]
    t = torch.zeros(4, device="cuda")
    try:
        a.send(t)
        a.send(torch.ones(5))
        if a.poll(60):
            res["child"] = a.recv()
        res["parent_sees"] = t.tolist()
    except Exception as e:
        res["send_error"] = repr(e)[:300]
    try:
        a.send("bye")
    except Exception:
        pass
    p.join(10)
    print(json.dumps(res))
