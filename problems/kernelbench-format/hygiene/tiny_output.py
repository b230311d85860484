# A problem whose check is vacuous (hygiene.py must report it): the outputs are far below the
# absolute tolerance, so an all-zero output passes allclose.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 1e-6


def get_inputs():
    return [torch.randn(1024, 1024)]


def get_init_inputs():
    return []
