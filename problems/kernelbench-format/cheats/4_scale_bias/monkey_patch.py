# Cheat: makes every comparison pass. expect: rejected monkey_patching
import torch
import torch.nn as nn

torch.allclose = lambda *args, **kwargs: True

class ModelNew(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(features))
        self.bias = nn.Parameter(torch.randn(features))

    def forward(self, x):
        return torch.zeros_like(x)
