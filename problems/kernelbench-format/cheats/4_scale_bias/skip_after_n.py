# Cheat: correct for the first calls (the correctness trials), then skips the work and returns
# uninitialised memory, which often holds an earlier output. expect: wrong_answer timed call
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(features))
        self.bias = nn.Parameter(torch.randn(features))

        self.calls = 0

    def forward(self, x):
        self.calls += 1
        if self.calls > 8:
            return torch.empty_like(x)
        return torch.addcmul(self.bias, x, self.scale)
