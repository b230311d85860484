# Cheat: takes over the reporting path of its own process. The function of the candidate's
# process that times its calls and builds the timing reply (candidate_worker.time_block) is
# wrapped so that every call is reported twenty times shorter than it ran; its forward sleeps
# 20 ms, so that what it hides is plain. The static screen sees the patching; with the screen
# only recording, the trusted side's timing bound must see the block walls.
# expect: rejected
import sys
import time

import torch
import torch.nn as nn


def _forge():
    worker = sys.modules.get("candidate_worker")
    if worker is None or getattr(worker, "forged", False):
        return
    real = worker.time_block

    def forged(*args, **kwargs):
        reply = real(*args, **kwargs)
        for sample in reply.get("samples", []):
            for field in ("union_ns", "window_ns"):
                sample[field] //= 20
        return reply

    worker.time_block = forged
    worker.forged = True


_forge()


class ModelNew(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(features))
        self.bias = nn.Parameter(torch.randn(features))

    def forward(self, x):
        time.sleep(0.02)
        return torch.addcmul(self.bias, x, self.scale)
