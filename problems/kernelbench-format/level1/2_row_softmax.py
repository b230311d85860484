# A kmcts-written problem in KernelBench's format (Model, get_inputs, get_init_inputs).
import torch
import torch.nn as nn


class Model(nn.Module):
    """Softmax over each row of a matrix."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


ROWS, COLS = 4096, 4096


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
