"""Submissions for the real-KernelBench campaign on the GPU machine (issue 25, item 5): for each
chosen problem of levels 1-3, candidates of our own writing in KernelBench's ModelNew form, each
standing alone as a submission must:
  - triton:  its own Triton kernels (matmul in IEEE fp32, fused epilogues): correct, often slower
             than cuBLAS;
  - partial: the library's GEMM or convolution (kept as a parameter holder) and its own Triton
             epilogue: correct, a low own-kernel share;
  - algebra: 14_Gemm_Divide_Sum_Scaling rewritten (the sum of a GEMM's columns is one GEMV):
             correct and far faster;
  - wrong:   its own Triton matmul that skips the last K tile, or a ReLU with the wrong threshold;
  - library: the reference's torch calls under ModelNew's name (rejected: no kernel of its own).
Usage: python3 campaign_candidates.py KB_ROOT OUT_DIR  (writes OUT_DIR/levelN/<problem>/<n>.py
and prints what it wrote)."""

import os
import sys

HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\nimport triton\nimport triton.language as tl\n"

MATMUL = '''
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sab, sam, sak, sbb, sbk, sbn, scb, scm, scn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, SKIP_LAST: tl.constexpr):
    pid_m, pid_n, bat = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + bat * sab + rm[:, None] * sam + rk[None, :] * sak
    b_ptrs = b_ptr + bat * sbb + rk[:, None] * sbk + rn[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    k_end = K
    if SKIP_LAST:
        k_end = K - BK
    for k in range(0, k_end, BK):
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] + k < K), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] + k < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
        a_ptrs += BK * sak
        b_ptrs += BK * sbk
    tl.store(c_ptr + bat * scb + rm[:, None] * scm + rn[None, :] * scn, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def bmm(a, b, skip_last=False):
    """a (B, M, K) @ b (B, K, N), any strides; a 2-D a or b is one batch."""
    a3 = a if a.dim() == 3 else a.unsqueeze(0)
    b3 = b if b.dim() == 3 else b.unsqueeze(0)
    batch, m, k = a3.shape
    n = b3.shape[2]
    c = torch.empty(max(batch, b3.shape[0]), m, n, device=a.device, dtype=torch.float32)
    grid = (triton.cdiv(m, 64), triton.cdiv(n, 64), c.shape[0])
    sab = a3.stride(0) if a3.shape[0] > 1 else 0
    sbb = b3.stride(0) if b3.shape[0] > 1 else 0
    matmul_kernel[grid](a3, b3, c, m, n, k, sab, a3.stride(1), a3.stride(2), sbb, b3.stride(1), b3.stride(2),
                        c.stride(0), c.stride(1), c.stride(2), BM=64, BN=64, BK=32, SKIP_LAST=skip_last)
    return c if a.dim() == 3 or b.dim() == 3 else c[0]
'''

EPILOGUE = '''
@triton.jit
def epilogue_kernel(x_ptr, vec_ptr, y_ptr, n, inner, vlen, p0, p1, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x_ptr + offs, mask=mask, other=0.0)
    idx = (offs // inner) % vlen
    w = tl.load(vec_ptr + idx, mask=mask, other=0.0)
    row = offs // vlen
{expr}
    tl.store(y_ptr + offs, v, mask=mask)


def epilogue(x, vec=None, inner=1, vlen=None, p0=0.0, p1=0.0):
    """The fused elementwise tail over contiguous x; vec is indexed by (i // inner) % vlen (a
    column's or a channel's value), row = i // vlen."""
    x = x.contiguous()
    y = torch.empty_like(x)
    vlen = vlen or x.shape[-1]
    vec = x if vec is None else vec.contiguous()
    n = x.numel()
    epilogue_kernel[(triton.cdiv(n, 1024),)](x, vec, y, n, inner, vlen, float(p0), float(p1), BLOCK=1024)
    return y
'''

MISH = """    for _ in tl.static_range(2):
        sp = tl.where(v > 20.0, v, tl.log(1.0 + tl.exp(tl.minimum(v, 20.0))))
        v = v * (2.0 / (1.0 + tl.exp(-2.0 * sp)) - 1.0)"""


def triton_forward(body, expr=None):
    """A candidate of its own kernels: the matmul, and an epilogue with `expr` if given."""
    code = HEADER + MATMUL
    if expr is not None:
        code += EPILOGUE.format(expr=expr)
    return code + body


def library(init, forward):
    return f"import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\nclass ModelNew(nn.Module):\n{init}\n{forward}\n"


PLAIN_INIT = "    def __init__(self, *args):\n        super().__init__()\n"


def mm_problem(call, torch_call, wrong=False, args="A, B"):
    """Level-1 matmul problems: ModelNew.forward(args) returns call (Triton), torch_call (library)."""
    body = f"\n\nclass ModelNew(nn.Module):\n{PLAIN_INIT}\n    def forward(self, {args}):\n        return {call}\n"
    out = {1: triton_forward(body), 2: library(PLAIN_INIT, f"    def forward(self, {args}):\n        return {torch_call}")}
    if wrong:
        out[3] = triton_forward(body.replace("bmm(", "bmm_wrong(")) + \
            "\n\ndef bmm_wrong(a, b):\n    return bmm(a, b, skip_last=True)\n"
    return out


def elementwise_problem(expr, forward_args, call, torch_call, init=PLAIN_INIT, wrong_expr=None):
    body = f"\n\nclass ModelNew(nn.Module):\n{init}\n    def forward(self, {forward_args}):\n        return {call}\n"
    out = {1: triton_forward(body, expr), 2: library(init, f"    def forward(self, {forward_args}):\n        return {torch_call}")}
    if wrong_expr:
        out[3] = triton_forward(body, wrong_expr)
    return out


def level1():
    c = {}
    plain = ("bmm(A, B)", "torch.matmul(A, B)")
    for n, name in ((1, "1_Square_matrix_multiplication_"), (2, "2_Standard_matrix_multiplication_"),
                    (6, "6_Matmul_with_large_K_dimension_"), (7, "7_Matmul_with_small_K_dimension_"),
                    (8, "8_Matmul_with_irregular_shapes_"), (9, "9_Tall_skinny_matrix_multiplication_"),
                    (13, "13_Matmul_for_symmetric_matrices"), (4, "4_Matrix_vector_multiplication_")):
        c[name] = mm_problem(*plain, wrong=n in (2, 8))
    c["3_Batched_matrix_multiplication"] = mm_problem("bmm(A, B)", "torch.bmm(A, B)", wrong=True)
    c["10_3D_tensor_matrix_multiplication"] = mm_problem(
        "bmm(A.reshape(-1, A.shape[-1]), B).reshape(A.shape[0], A.shape[1], B.shape[1])", "torch.matmul(A, B)")
    c["11_4D_tensor_matrix_multiplication"] = mm_problem(
        "bmm(A.reshape(-1, A.shape[-1]), B).reshape(*A.shape[:3], B.shape[1])", 'torch.einsum("bijl,lk->bijk", A, B)')
    c["16_Matmul_with_transposed_A"] = mm_problem("bmm(A.t(), B)", "torch.matmul(A.T, B)")
    c["17_Matmul_with_transposed_B"] = mm_problem("bmm(A, B.t())", "torch.matmul(A, B.T)")
    c["18_Matmul_with_transposed_both"] = mm_problem("bmm(A.t(), B.t())", "torch.matmul(A.T, B.T)", wrong=True)
    for name, keep in (("14_Matmul_for_upper_triangular_matrices", "row <= idx"),
                       ("15_Matmul_for_lower_triangular_matrices", "row >= idx")):
        torch_op = "triu" if "upper" in name else "tril"
        c[name] = elementwise_problem(f"    v = tl.where({keep}, v, 0.0)", "A, B", "epilogue(bmm(A, B))",
                                      f"torch.{torch_op}(torch.matmul(A, B))")
    c["5_Matrix_scalar_multiplication"] = elementwise_problem("    v = v * p0", "A, s", "epilogue(A, p0=s)", "A * s")
    c["12_Matmul_with_diagonal_matrices_"] = elementwise_problem(
        "    v = v * tl.load(vec_ptr + row, mask=mask, other=0.0)", "A, B", "epilogue(B, vec=A)", "A.unsqueeze(1) * B")
    c["19_ReLU"] = elementwise_problem("    v = tl.maximum(v, 0.0)", "x", "epilogue(x)", "torch.relu(x)",
                                       wrong_expr="    v = tl.maximum(v, 0.001)")
    slope_init = ("    def __init__(self, negative_slope: float = 0.01):\n        super().__init__()\n"
                  "        self.negative_slope = negative_slope\n")
    c["20_LeakyReLU"] = elementwise_problem("    v = tl.where(v > 0, v, v * p0)", "x", "epilogue(x, p0=self.negative_slope)",
                                            "F.leaky_relu(x, self.negative_slope)", init=slope_init)
    return c


def linear_epilogue(init, holder, expr, params, torch_tail):
    """Level-2 GEMM + elementwise: own (Triton matmul, bias in the epilogue) and partial (F.linear)."""
    own = (f"\n\nclass ModelNew(nn.Module):\n{init}\n    def forward(self, x):\n"
           f"        y = bmm(x, self.{holder}.weight.t())\n"
           f"        return epilogue(y, vec=self.{holder}.bias, {params})\n")
    partial = (f"\n\nclass ModelNew(nn.Module):\n{init}\n    def forward(self, x):\n"
               f"        y = F.linear(x, self.{holder}.weight)\n"
               f"        return epilogue(y, vec=self.{holder}.bias, {params})\n")
    lib = library(init, f"    def forward(self, x):\n        x = self.{holder}(x)\n{torch_tail}        return x")
    return {1: triton_forward(own, expr), 2: triton_forward(partial, expr), 3: lib}


def level2():
    c = {}
    init9 = ("    def __init__(self, in_features, out_features, subtract_value, multiply_value):\n        super().__init__()\n"
             "        self.linear = nn.Linear(in_features, out_features)\n"
             "        self.subtract_value, self.multiply_value = subtract_value, multiply_value\n")
    c["9_Matmul_Subtract_Multiply_ReLU"] = linear_epilogue(
        init9, "linear", "    v = tl.maximum((v + w - p0) * p1, 0.0)", "p0=self.subtract_value, p1=self.multiply_value",
        "        x = torch.relu((x - self.subtract_value) * self.multiply_value)\n")
    init12 = ("    def __init__(self, in_features, out_features, multiplier, negative_slope):\n        super().__init__()\n"
              "        self.gemm = nn.Linear(in_features, out_features)\n"
              "        self.multiplier, self.negative_slope = multiplier, negative_slope\n")
    c["12_Gemm_Multiply_LeakyReLU"] = linear_epilogue(
        init12, "gemm", "    v = (v + w) * p0\n    v = tl.where(v > 0, v, v * p1)", "p0=self.multiplier, p1=self.negative_slope",
        "        x = F.leaky_relu(x * self.multiplier, self.negative_slope)\n")
    init14 = ("    def __init__(self, input_size, hidden_size, scaling_factor):\n        super().__init__()\n"
              "        self.weight = nn.Parameter(torch.randn(hidden_size, input_size))\n"
              "        self.scaling_factor = scaling_factor\n")
    algebra = '''

@triton.jit
def rowdot_kernel(x_ptr, w_ptr, y_ptr, K, scale, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for k in range(0, K, BLOCK):
        offs = k + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * K + offs, mask=offs < K, other=0.0) * tl.load(w_ptr + offs, mask=offs < K, other=0.0)
    tl.store(y_ptr + row, tl.sum(acc, axis=0) * scale)


class ModelNew(nn.Module):
''' + init14 + '''
    def forward(self, x):
        # sum_h (x W^T)[b, h] = x . (sum_h W[h, :]): one GEMV instead of a GEMM and a reduction
        w = self.weight.sum(dim=0)
        x = x.contiguous()
        y = torch.empty(x.shape[0], 1, device=x.device, dtype=torch.float32)
        rowdot_kernel[(x.shape[0],)](x, w, y, x.shape[1], self.scaling_factor / 2, BLOCK=1024)
        return y
'''
    c["14_Gemm_Divide_Sum_Scaling"] = {
        1: HEADER + algebra,
        2: library(init14, "    def forward(self, x):\n        x = torch.matmul(x, self.weight.T) / 2\n"
                           "        return torch.sum(x, dim=1, keepdim=True) * self.scaling_factor")}
    init1 = ("    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):\n        super().__init__()\n"
             "        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)\n"
             "        self.bias = nn.Parameter(torch.randn(bias_shape))\n")
    conv1 = ("\n\nclass ModelNew(nn.Module):\n" + init1 + "\n    def forward(self, x):\n        y = self.conv(x)\n"
             "        return epilogue(y, vec=self.bias, inner=y.shape[2] * y.shape[3], vlen=y.shape[1])\n")
    c["1_Conv2D_ReLU_BiasAdd"] = {
        1: triton_forward(conv1, "    v = tl.maximum(v, 0.0) + w"),
        2: triton_forward(conv1, "    v = tl.maximum(v, 0.0)"),  # wrong: the bias left out
        3: library(init1, "    def forward(self, x):\n        return torch.relu(self.conv(x)) + self.bias")}
    init4 = ("    def __init__(self, in_channels, out_channels, kernel_size):\n        super().__init__()\n"
             "        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)\n")
    conv4 = "\n\nclass ModelNew(nn.Module):\n" + init4 + "\n    def forward(self, x):\n        return epilogue(self.conv(x))\n"
    c["4_Conv2d_Mish_Mish"] = {
        1: triton_forward(conv4, MISH),
        2: library(init4, "    def forward(self, x):\n        return F.mish(F.mish(self.conv(x)))")}
    return c


def level3():
    mlp = '''

class ModelNew(nn.Module):
    def __init__(self, input_size, layer_sizes, output_size):
        super().__init__()
        layers, current = [], input_size
        for size in layer_sizes:
            layers += [nn.Linear(current, size), nn.ReLU()]
            current = size
        layers.append(nn.Linear(current, output_size))
        self.network = nn.Sequential(*layers)  # holds the weights: the GEMMs stay cuBLAS's

    def forward(self, x):
        linears = [m for m in self.network if isinstance(m, nn.Linear)]
        for k, lin in enumerate(linears):
            x = F.linear(x, lin.weight)
            x = epilogue(x, vec=lin.bias, p0=0.0 if k + 1 < len(linears) else 1.0)
        return x
'''
    expr = "    v = v + w\n    v = tl.where(p0 > 0.5, v, tl.maximum(v, 0.0))"
    lib = library("    def __init__(self, input_size, layer_sizes, output_size):\n        super().__init__()\n"
                  "        layers, current = [], input_size\n        for size in layer_sizes:\n"
                  "            layers += [nn.Linear(current, size), nn.ReLU()]\n            current = size\n"
                  "        layers.append(nn.Linear(current, output_size))\n        self.network = nn.Sequential(*layers)\n",
                  "    def forward(self, x):\n        return self.network(x)")
    return {"1_MLP": {1: triton_forward(mlp, expr), 2: lib},
            "2_ShallowWideMLP": {1: triton_forward(mlp, expr).replace("layer_sizes", "hidden_layer_sizes"),
                                 2: lib.replace("layer_sizes", "hidden_layer_sizes")}}


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    kb, out = sys.argv[1], sys.argv[2]
    for level, problems in ((1, level1()), (2, level2()), (3, level3())):
        for name, files in problems.items():
            if not os.path.exists(os.path.join(kb, "KernelBench", f"level{level}", name + ".py")):
                sys.exit(f"level{level}/{name}.py is not in {kb}")
            folder = os.path.join(out, f"level{level}", name)
            os.makedirs(folder, exist_ok=True)
            for n, text in files.items():
                with open(os.path.join(folder, f"{n}.py"), "w", encoding="utf-8") as f:
                    f.write(text)
            print(f"level{level}/{name}: {len(files)} candidates")


if __name__ == "__main__":
    main()
