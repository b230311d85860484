# A kmcts-written problem in KernelBench's format, with learned parameters: the evaluation
# must seed before constructing Model and ModelNew so both draw the same weights.
import torch
import torch.nn as nn


class Model(nn.Module):
    """y = x * scale + bias, per feature (scale and bias are parameters)."""

    def __init__(self, features: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(features))
        self.bias = nn.Parameter(torch.randn(features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.scale + self.bias


BATCH, FEATURES = 8192, 2048


def get_inputs():
    return [torch.randn(BATCH, FEATURES)]


def get_init_inputs():
    return [FEATURES]
