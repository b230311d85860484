# A problem whose check is vacuous (hygiene.py must report it): the reference is stochastic
# (dropout left in training mode), so no candidate can match it call for call.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.dropout(x, p=0.5, training=True)


def get_inputs():
    return [torch.randn(1024, 1024)]


def get_init_inputs():
    return []
