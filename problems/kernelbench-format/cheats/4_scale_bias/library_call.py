# Cheat: the library computes (a matrix multiply by diag(scale)) instead of a kernel of its own.
# The screen only notes it; on a GPU the kernel attribution finds no kernel of its own (the CPU
# has none to attribute, where it is correct and passes).
# expect: ok
# expect-gpu: rejected no kernel of its own ran
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(features))
        self.bias = nn.Parameter(torch.randn(features))

    def forward(self, x):
        return torch.nn.functional.linear(x, torch.diag(self.scale), self.bias)
