# A kmcts-written level-2-style problem in KernelBench's format: a convolution followed by a
# ReLU and a per-channel bias, three operators a kernel can fuse.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels_in: int, channels_out: int, kernel: int):
        super().__init__()
        self.conv = nn.Conv2d(channels_in, channels_out, kernel, padding=kernel // 2)
        self.bias = nn.Parameter(torch.randn(channels_out, 1, 1) * 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.conv(x)) + self.bias


BATCH, CHANNELS_IN, CHANNELS_OUT, SIZE, KERNEL = 16, 32, 64, 64, 3


def get_inputs():
    return [torch.randn(BATCH, CHANNELS_IN, SIZE, SIZE)]


def get_init_inputs():
    return [CHANNELS_IN, CHANNELS_OUT, KERNEL]
