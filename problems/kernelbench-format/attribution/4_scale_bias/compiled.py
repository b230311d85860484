# For level1/4_scale_bias: torch.compile inside ModelNew: inductor's Triton kernels do the work.
# expect-gpu: rejected no kernel of its own ran
import torch
import torch.nn as nn


def scale_bias(x, scale, bias):
    return x * scale + bias


class ModelNew(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(features))
        self.bias = nn.Parameter(torch.randn(features))
        self.fn = torch.compile(scale_bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fn(x, self.scale, self.bias)
