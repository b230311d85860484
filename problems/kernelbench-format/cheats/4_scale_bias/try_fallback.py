# Cheat: a fallback to torch when its own path fails. expect: rejected try_fallback
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(features))
        self.bias = nn.Parameter(torch.randn(features))

    def forward(self, x):
        try:
            return self.fast(x)
        except Exception:
            return torch.addcmul(self.bias, x, self.scale)
