# A kmcts-written level-3-style problem (a small architecture) in KernelBench's format: a
# pre-norm residual MLP block.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, width: int, hidden: int):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.up = nn.Linear(width, hidden)
        self.down = nn.Linear(hidden, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.down(torch.nn.functional.silu(self.up(self.norm(x))))


TOKENS, WIDTH, HIDDEN = 2048, 1024, 4096


def get_inputs():
    return [torch.randn(TOKENS, WIDTH)]


def get_init_inputs():
    return [WIDTH, HIDDEN]
