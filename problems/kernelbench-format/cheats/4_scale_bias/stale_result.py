# Cheat: returns the last result it computed once past the correctness trials.
# expect: wrong_answer timed call
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(features))
        self.bias = nn.Parameter(torch.randn(features))

        self.calls = 0
        self.last = None

    def forward(self, x):
        self.calls += 1
        if self.last is None or self.calls <= 6:
            self.last = torch.addcmul(self.bias, x, self.scale)
        return self.last
