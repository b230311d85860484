# A kmcts-written problem in KernelBench's format (Model, get_inputs, get_init_inputs).
import torch
import torch.nn as nn


class Model(nn.Module):
    """C = A @ B for square fp32 matrices."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


N = 2048


def get_inputs():
    return [torch.randn(N, N), torch.randn(N, N)]


def get_init_inputs():
    return []
