# Cheat: returns float64 (more precise, twice the bytes). expect: wrong_answer dtype
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(features))
        self.bias = nn.Parameter(torch.randn(features))

    def forward(self, x):
        return torch.addcmul(self.bias.double(), x.double(), self.scale.double())
