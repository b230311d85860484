# Cheat: computes in bfloat16, beyond the tolerance. expect: wrong_answer
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(features))
        self.bias = nn.Parameter(torch.randn(features))

    def forward(self, x):
        return (x.bfloat16() * self.scale.bfloat16() + self.bias.bfloat16()).float()
