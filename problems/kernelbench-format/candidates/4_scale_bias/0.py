# A correct candidate for level1/4_scale_bias.py: one fused addcmul instead of a multiply and an
# add. Its parameters are drawn like Model's, so the evaluation must seed both the same way.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(features))
        self.bias = nn.Parameter(torch.randn(features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.addcmul(self.bias, x, self.scale)
