# A Triton candidate for level1/4_scale_bias.py: y = x * scale + bias in one Triton kernel, each
# program instance doing BLOCK consecutive elements of the row-major (batch, features) input.
# Its parameters are drawn like Model's, so the evaluation must seed both the same way.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scale_bias_kernel(x_ptr, scale_ptr, bias_ptr, out_ptr, n, features, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offsets < n
    column = offsets % features
    x = tl.load(x_ptr + offsets, mask=inside)
    scale = tl.load(scale_ptr + column, mask=inside)
    bias = tl.load(bias_ptr + column, mask=inside)
    tl.store(out_ptr + offsets, x * scale + bias, mask=inside)


class ModelNew(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(features))
        self.bias = nn.Parameter(torch.randn(features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        block = 2048
        scale_bias_kernel[(triton.cdiv(n, block),)](x, self.scale, self.bias, out, n, x.shape[-1], BLOCK=block)
        return out
