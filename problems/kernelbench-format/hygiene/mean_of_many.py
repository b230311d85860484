# A problem whose check is vacuous (hygiene.py must report it): the mean of 16M uniform draws is
# 0.5 to within about 1e-4 whatever the draw, so a kernel returning the constant 0.5 passes.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.mean(x).reshape(1)


def get_inputs():
    return [torch.rand(4096, 4096)]


def get_init_inputs():
    return []
