# Cheat: computes in place in the input and returns it (no output allocation).
# expect: wrong_answer modified
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(features))
        self.bias = nn.Parameter(torch.randn(features))

    def forward(self, x):
        return x.mul_(self.scale).add_(self.bias)
