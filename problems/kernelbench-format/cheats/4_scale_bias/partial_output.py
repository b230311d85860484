# Cheat: writes only the first half of the rows. expect: wrong_answer
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(features))
        self.bias = nn.Parameter(torch.randn(features))

    def forward(self, x):
        y = torch.zeros_like(x)
        half = x.shape[0] // 2
        y[:half] = torch.addcmul(self.bias, x[:half], self.scale)
        return y
