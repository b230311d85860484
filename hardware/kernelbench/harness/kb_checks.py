"""The hardened harness's input draws and output checks (hardened.py), written to bound their
memory: a problem's inputs for a seed in one of several distributions, drawn in place where the
values come out the same, and the scale-aware comparison of an output with the reference's, a
piece of CHECK_CHUNK elements at a time (tests/python/test_kb_checks.py)."""

import math

from faithful import on_device, set_seed


def draw_inputs(problem, seed, distribution, device):
    """The problem's inputs for `seed`, floating tensors reshaped to `distribution`, on device.
    A tensor is redrawn after the problem's own is let go, and transformed in place where the
    values come out the same: the real level1/19_ReLU's inputs are 6 GiB each, and an 80 GB GPU
    holds only so many (bench/results/confinement.md, run K)."""
    import torch
    set_seed(seed)
    with on_device(device):  # torch >= 2: drawn on the device, not on the CPU
        values = problem.get_inputs()
    values = [v.to(device) if isinstance(v, torch.Tensor) else v for v in values]
    g = torch.Generator(device=device).manual_seed(seed)
    for k in range(len(values)):  # by index: no loop variable keeps a tensor being replaced alive
        if isinstance(values[k], torch.Tensor) and values[k].is_floating_point() and distribution != "problem":
            values[k] = redrawn(values, k, distribution, g, device)
        if isinstance(values[k], torch.Tensor):
            values[k] = values[k].contiguous()
    return values


def redrawn(values, k, distribution, g, device):
    """values[k] as `distribution`: uniform [0, 1), negative (-|v| - U[0, 1)) or heavy-tailed
    (N(0,1) x exp(N(0,1))), drawing from `g` in that order. It takes values[k] out of the list,
    so that where the old values are not needed they are freed before the new are drawn."""
    import torch
    v, values[k] = values[k], None
    shape, dtype = v.shape, v.dtype
    if distribution == "uniform":
        del v
        return torch.rand(shape, generator=g, device=device, dtype=dtype)
    if distribution == "negative":
        v = v.abs()  # -(|v| + u) is -|v| - u exactly (IEEE rounding is symmetric)
        v.add_(torch.rand(shape, generator=g, device=device, dtype=dtype))
        return v.neg_()
    if distribution == "heavy_tailed":
        del v
        n = torch.randn(shape, generator=g, device=device, dtype=dtype)
        return n.mul_(torch.randn(shape, generator=g, device=device, dtype=dtype).exp_())
    raise ValueError(f"unknown input distribution {distribution!r}")


CHECK_CHUNK = 1 << 26  # elements per step of an output check: its temporaries stay near 256 MiB each


def chunked(*tensors):
    """Matching pieces of the flattened tensors, CHECK_CHUNK elements at a time (views where the
    tensors are contiguous)."""
    flat = [t.reshape(-1) for t in tensors]
    n = flat[0].numel()
    for i in range(0, max(n, 1), CHECK_CHUNK):
        yield [f[i:i + CHECK_CHUNK] for f in flat]


def output_scale(expected):
    """max(1, RMS of expected over its finite elements): the scale the absolute tolerance grows
    with (the RMS, not the maximum, so that one outlier does not loosen every element)."""
    import torch
    count, squares = 0, 0.0
    for (e,) in chunked(expected):
        e = e.float()
        finite = torch.isfinite(e)
        n = int(finite.sum().item())
        if n:
            # torch.where, not e[finite]: a boolean index builds an int64 index per element and
            # dimension (56 GiB for a 7 GiB 4-D output).
            squares += float(torch.where(finite, e, torch.zeros((), dtype=e.dtype, device=e.device)).norm().item()) ** 2
            count += n
    if count == 0:
        return 1.0
    return max(1.0, math.sqrt(squares / count))


def agrees(g, e, tol, scale):
    """Per element: equal (infinities of one sign included), NaN on both sides, or both finite and
    within the tolerance (an infinite reference no longer admits any finite value: rtol x inf)."""
    import torch
    close = (g - e).abs() <= tol["atol"] * scale + tol["rtol"] * e.abs()
    return (g == e) | (torch.isnan(g) & torch.isnan(e)) | (close & torch.isfinite(g) & torch.isfinite(e))


def mismatch(got, expected, tol, scale=None):
    """None when got matches expected under the scale-aware tolerance (|got - expected| <= atol x
    scale + rtol x |expected|, NaN where and only where the reference has NaN, infinities equal),
    else a description. A piece at a time (CHECK_CHUNK elements), with one synchronisation in the
    common (passing) case."""
    import torch
    scale = output_scale(expected) if scale is None else scale
    passed = None
    for g, e in chunked(got, expected):
        g, e = g.float(), e.float()
        ok = agrees(g, e, tol, scale).all()
        passed = ok if passed is None else passed & ok
    if passed is None or bool(passed):
        return None
    nan_differs = inf_differs = sign_differs = False
    worst, bad = 0.0, 0
    for g, e in chunked(got, expected):
        g, e = g.float(), e.float()
        nan_differs = nan_differs or not torch.equal(torch.isnan(g), torch.isnan(e))
        inf_differs = inf_differs or not torch.equal(torch.isfinite(g), torch.isfinite(e))
        sign_differs = sign_differs or bool((torch.isinf(g) & torch.isinf(e) & (g != e)).any())
        ok = agrees(g, e, tol, scale)
        finite = torch.isfinite(e) & torch.isfinite(g)
        diff = torch.where(finite, (g - e).abs(), torch.zeros((), dtype=g.dtype, device=g.device))
        if diff.numel():
            worst = max(worst, float(diff.max().item()))
        bad += int((~ok).sum().item())
    if nan_differs:
        return "NaN where the reference has none (or the reverse)"
    if inf_differs:
        return "inf where the reference has none (or the reverse)"
    if sign_differs:
        return "inf of the other sign where the reference has inf"
    return (f"max |diff| {worst:.3g} beyond atol {tol['atol']:g} x scale {scale:.3g} + rtol "
            f"{tol['rtol']:g} x |ref| ({bad} elements)")


def modified(inputs, pristine):
    import torch
    for k, (a, b) in enumerate(zip(inputs, pristine)):
        if isinstance(a, torch.Tensor) and not torch.equal(a, b):
            return f"input {k} was modified by the candidate"
    return None
