"""Timers of the hardened KernelBench evaluation: CUPTI through kmcts's libkmcts_kb_timer.so on a
GPU (the union of all kernel, memcpy and memset intervals on any stream in the call's window,
and the kernels that ran outside any window), and a wall-clock stand-in on the CPU (tests of
the protocol logic without a GPU; not a measurement)."""

import ctypes
import json
import os
import time


class Sample(ctypes.Structure):
    _fields_ = [("union_ns", ctypes.c_uint64), ("window_ns", ctypes.c_uint64), ("kernels", ctypes.c_int32),
                ("memcpys", ctypes.c_int32), ("memsets", ctypes.c_int32), ("streams", ctypes.c_int32),
                ("stray_before", ctypes.c_int32), ("stray_after", ctypes.c_int32),
                ("own_ns", ctypes.c_uint64), ("library_ns", ctypes.c_uint64), ("unknown_ns", ctypes.c_uint64),
                ("own_kernels", ctypes.c_int32), ("library_kernels", ctypes.c_int32),
                ("unknown_kernels", ctypes.c_int32), ("attributed", ctypes.c_int32)]


LAUNCH = ctypes.CFUNCTYPE(None)


class CuptiTimer:
    def __init__(self, library, flush_bytes=0):
        self.lib = ctypes.CDLL(library)
        self.error = ctypes.create_string_buffer(1024)
        self.lib.kmcts_kb_timer_open.argtypes = [ctypes.c_uint64, ctypes.c_char_p, ctypes.c_int]
        self.lib.kmcts_kb_timer_flush.argtypes = [ctypes.c_char_p, ctypes.c_int]
        self.lib.kmcts_kb_timer_measure.argtypes = [LAUNCH, ctypes.POINTER(Sample), ctypes.c_char_p, ctypes.c_int]
        self.lib.kmcts_kb_timer_attribute.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int]
        self.lib.kmcts_kb_timer_library_objects.argtypes = [ctypes.c_char_p, ctypes.c_int]
        self.lib.kmcts_kb_timer_kernel_table.argtypes = [ctypes.c_char_p, ctypes.c_int]
        self._check(self.lib.kmcts_kb_timer_open(flush_bytes, self.error, len(self.error)), "opening the CUPTI timer")
        self.objects = ctypes.create_string_buffer(1 << 16)
        self.table = ctypes.create_string_buffer(1 << 17)  # 64 rows of names up to 512 characters

    def attribute(self, own_roots):
        """Every later sample's kernels attributed: own (launched from an object under one of
        own_roots: the candidate's extension and Triton folders) or a library's."""
        roots = ":".join(os.path.realpath(r) for r in own_roots if r)
        self._check(self.lib.kmcts_kb_timer_attribute(roots.encode(), self.error, len(self.error)),
                    "kernel attribution")

    def library_objects(self):
        """The last sample's library kernels: {object: [count, ns]}."""
        if self.lib.kmcts_kb_timer_library_objects(self.objects, len(self.objects)) < 0:
            return {"(too many objects to list)": [0, 0]}
        out = {}
        for line in self.objects.value.decode(errors="replace").splitlines():
            name, count, ns = line.rsplit(" ", 2)
            out[name] = [int(count), int(ns)]
        return out

    def kernel_table(self):
        """The last sample's kernels per launch: rows of hardware/cuda/kernel_table.hpp."""
        if self.lib.kmcts_kb_timer_kernel_table(self.table, len(self.table)) < 0:
            return []
        return json.loads(self.table.value.decode(errors="replace"))

    def _check(self, rc, what):
        if rc != 0:
            raise RuntimeError(f"{what}: {self.error.value.decode(errors='replace')}")

    def flush(self):
        self._check(self.lib.kmcts_kb_timer_flush(self.error, len(self.error)), "L2 flush")

    def measure(self, call):
        """Times call(); returns (sample dict, call's return value). An exception in call is
        re-raised after the window closes."""
        box = {}

        def launch():
            try:
                box["value"] = call()
            except BaseException as e:  # noqa: BLE001 - carried across the C frame
                box["error"] = e

        sample = Sample()
        self._check(self.lib.kmcts_kb_timer_measure(LAUNCH(launch), ctypes.byref(sample), self.error,
                                                    len(self.error)), "CUPTI measurement")
        if "error" in box:
            raise box["error"]
        out = {name: getattr(sample, name) for name, _ in Sample._fields_}
        if sample.library_kernels:
            out["library_objects"] = self.library_objects()
        return out, box.get("value")


class WallTimer:
    """--device cpu: perf_counter around the call, nothing to flush, no strays."""

    def flush(self):
        pass

    def attribute(self, own_roots):
        pass  # nothing runs on a GPU: every sample is unattributed

    def kernel_table(self):
        return []  # no kernels

    def measure(self, call):
        start = time.perf_counter_ns()
        value = call()
        ns = time.perf_counter_ns() - start
        return {"union_ns": ns, "window_ns": ns, "kernels": 0, "memcpys": 0, "memsets": 0, "streams": 0,
                "stray_before": 0, "stray_after": 0, "own_ns": 0, "library_ns": 0, "unknown_ns": 0, "own_kernels": 0,
                "library_kernels": 0, "unknown_kernels": 0, "attributed": 0}, value


def make_timer(device, library):
    return WallTimer() if device.type != "cuda" else CuptiTimer(library)
