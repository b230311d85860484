# Cheat: the harness's timer made to report almost nothing. expect: rejected timer_patching
import torch
import torch.nn as nn

torch.cuda.Event.elapsed_time = lambda self, end: 1e-3

class ModelNew(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(features))
        self.bias = nn.Parameter(torch.randn(features))

    def forward(self, x):
        return torch.addcmul(self.bias, x, self.scale)
