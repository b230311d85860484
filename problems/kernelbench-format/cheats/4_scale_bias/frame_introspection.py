# Cheat: looks up the caller's frames for the reference's output. expect: rejected frame_introspection
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(features))
        self.bias = nn.Parameter(torch.randn(features))

    def forward(self, x):
        import inspect
        for frame in inspect.stack():
            if "expected" in frame.frame.f_locals:
                return frame.frame.f_locals["expected"]
        return torch.addcmul(self.bias, x, self.scale)
