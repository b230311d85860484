# A kmcts-written problem in KernelBench's format (Model, get_inputs, get_init_inputs).
import torch
import torch.nn as nn


class Model(nn.Module):
    """y = max(x, 0), elementwise."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


ROWS, COLS = 4096, 4096


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
