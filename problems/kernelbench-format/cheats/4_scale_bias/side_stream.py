# Cheat: work on a side stream that the caller's events would not wait for.
# expect: rejected streams
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(features))
        self.bias = nn.Parameter(torch.randn(features))

    def forward(self, x):
        if not x.is_cuda:
            return torch.addcmul(self.bias, x, self.scale)
        side = torch.cuda.Stream()
        with torch.cuda.stream(side):
            return torch.addcmul(self.bias, x, self.scale)
