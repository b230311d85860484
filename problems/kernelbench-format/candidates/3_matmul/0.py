# A lower-precision candidate for level1/3_matmul.py: the product in TF32 (10-bit mantissa)
# instead of fp32, the "silently lowered precision" cheat. On the H200 its largest error is
# 0.069 (K = 2048, normal inputs); allclose is elementwise, so entries near zero fail even the
# paper-era 1e-2 tolerance, not only today's 1e-4. The precision flag is restored after the
# call, so that in the faithful mode (one process) the reference still runs in fp32.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        before = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = True
        try:
            return torch.matmul(a, b)
        finally:
            torch.backends.cuda.matmul.allow_tf32 = before
