# A kmcts-written level-2-style problem (a few operators to fuse) in KernelBench's format.
import torch
import torch.nn as nn


class Model(nn.Module):
    """y = GELU(x W^T + b) * scale: a linear layer, an activation and a per-feature scale."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = nn.Parameter(torch.rand(out_features) + 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(self.linear(x)) * self.scale


BATCH, IN_FEATURES, OUT_FEATURES = 1024, 2048, 2048


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
