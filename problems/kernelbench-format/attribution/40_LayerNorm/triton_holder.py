# For KernelBench level1/40_LayerNorm: a two-pass LayerNorm in Triton kernels of its own that
# keeps nn.LayerNorm only to hold its weight and bias, initialised as the reference's (an honest
# KernelBench pattern the static screen once rejected).
# expect-gpu: ok
import torch
import torch.nn as nn
import triton
import triton.language as tl

CHUNK = 4096


@triton.jit
def chunk_sum(x_ptr, out_ptr, row_len, n_chunks, CHUNK: tl.constexpr):
    row, c = tl.program_id(0), tl.program_id(1)
    offs = c * CHUNK + tl.arange(0, CHUNK)
    x = tl.load(x_ptr + row * row_len + offs, mask=offs < row_len, other=0.0).to(tl.float32)
    tl.store(out_ptr + row * n_chunks + c, tl.sum(x, axis=0))


@triton.jit
def chunk_sq(x_ptr, sums_ptr, out_ptr, row_len, n_chunks, NCH: tl.constexpr, CHUNK: tl.constexpr):
    row, c = tl.program_id(0), tl.program_id(1)
    k = tl.arange(0, NCH)
    mean = tl.sum(tl.load(sums_ptr + row * n_chunks + k, mask=k < n_chunks, other=0.0), axis=0) / row_len
    offs = c * CHUNK + tl.arange(0, CHUNK)
    mask = offs < row_len
    x = tl.load(x_ptr + row * row_len + offs, mask=mask, other=0.0).to(tl.float32)
    d = tl.where(mask, x - mean, 0.0)
    tl.store(out_ptr + row * n_chunks + c, tl.sum(d * d, axis=0))


@triton.jit
def normalize(x_ptr, w_ptr, b_ptr, y_ptr, sums_ptr, sqs_ptr, row_len, n_chunks, eps, NCH: tl.constexpr,
              CHUNK: tl.constexpr):
    row, c = tl.program_id(0), tl.program_id(1)
    k = tl.arange(0, NCH)
    mean = tl.sum(tl.load(sums_ptr + row * n_chunks + k, mask=k < n_chunks, other=0.0), axis=0) / row_len
    var = tl.sum(tl.load(sqs_ptr + row * n_chunks + k, mask=k < n_chunks, other=0.0), axis=0) / row_len
    rstd = 1.0 / tl.sqrt(var + eps)
    offs = c * CHUNK + tl.arange(0, CHUNK)
    mask = offs < row_len
    x = tl.load(x_ptr + row * row_len + offs, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + row * row_len + offs, (x - mean) * rstd * w + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, normalized_shape: tuple):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)  # holds weight and bias only

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        row_len = self.ln.weight.numel()
        rows = x.numel() // row_len
        n_chunks = triton.cdiv(row_len, CHUNK)
        nch = triton.next_power_of_2(n_chunks)
        sums = torch.empty(rows, n_chunks, device=x.device, dtype=torch.float32)
        sqs = torch.empty_like(sums)
        y = torch.empty_like(x)
        grid = (rows, n_chunks)
        chunk_sum[grid](x, sums, row_len, n_chunks, CHUNK=CHUNK)
        chunk_sq[grid](x, sums, sqs, row_len, n_chunks, NCH=nch, CHUNK=CHUNK)
        normalize[grid](x, self.ln.weight, self.ln.bias, y, sums, sqs, row_len, n_chunks, self.ln.eps, NCH=nch,
                        CHUNK=CHUNK)
        return y
