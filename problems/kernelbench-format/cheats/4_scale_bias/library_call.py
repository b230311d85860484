# Cheat: the library computes (a matrix multiply by diag(scale)) instead of a kernel of its own.
# expect: rejected library_compute
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(features))
        self.bias = nn.Parameter(torch.randn(features))

    def forward(self, x):
        return torch.nn.functional.linear(x, torch.diag(self.scale), self.bias)
