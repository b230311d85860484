# For level1/4_scale_bias: its own Triton kernel, captured once in a CUDA graph and replayed
# (the graph's kernels are attributed through the graph nodes their capture created).
# expect-gpu: ok
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scale_bias_kernel(x_ptr, s_ptr, b_ptr, y_ptr, n, features, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    col = offs % features
    x = tl.load(x_ptr + offs, mask=mask)
    s = tl.load(s_ptr + col, mask=mask)
    b = tl.load(b_ptr + col, mask=mask)
    tl.store(y_ptr + offs, x * s + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(features))
        self.bias = nn.Parameter(torch.randn(features))
        self.graph = None

    def launch(self):
        n = self.static_x.numel()
        scale_bias_kernel[(triton.cdiv(n, 1024),)](self.static_x, self.scale, self.bias, self.static_y, n,
                                                   self.static_x.shape[-1], BLOCK=1024)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.graph is None or self.static_x.shape != x.shape:
            self.static_x = x.clone()
            self.static_y = torch.empty_like(x)
            self.launch()  # compiles the kernel before the capture
            torch.cuda.synchronize()
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                self.launch()
        self.static_x.copy_(x)
        self.graph.replay()
        return self.static_y
