# Cheat: finds the harness's pipe among its process's file descriptors and writes a forged
# timing reply to it. expect: rejected process_escape
import os
import stat

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(features))
        self.bias = nn.Parameter(torch.randn(features))

    def forward(self, x):
        for fd in range(3, 64):
            try:
                if stat.S_ISSOCK(os.fstat(fd).st_mode):
                    os.write(fd, b"\x00\x00\x00\x0c{\"ok\": true}")
            except OSError:
                pass
        return torch.addcmul(self.bias, x, self.scale)
