# Cheat: returns a tensor subclass, whose copy into the harness's buffer could run the work
# after the timing window. expect: wrong_answer plain torch.Tensor
import torch
import torch.nn as nn


class Deferred(torch.Tensor):
    pass


class ModelNew(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(features))
        self.bias = nn.Parameter(torch.randn(features))

    def forward(self, x):
        return torch.addcmul(self.bias, x, self.scale).as_subclass(Deferred)
