"""Torch-free rules of the problem-hygiene check (hygiene.py): when a KernelBench problem's
correctness check is vacuous, so that a score on it says little. Tested in CI
(tests/python/test_kb_hygiene.py)."""

# An output whose change between two independent input draws is below this fraction of its
# scale barely depends on its input (e.g. the mean of millions of uniform draws).
INSENSITIVE_RELATIVE_CHANGE = 1e-3


def findings(m, atol, rtol):
    """The vacuous-check findings for measurements `m` of one problem's reference:
      rerun_max_abs_diff   - |out - out'| max over two calls on the same inputs, same seed
      zero_max_abs_diff    - |out| max (what an all-zero output would be off by)
      zero_allclose        - whether allclose(zeros, out, atol, rtol) holds
      input_change_max_abs - |out(inputs A) - out(inputs B)| max over two input draws
      output_scale         - max |out|
    Returns a list of {"finding", "detail"} (empty: the check is meaningful)."""
    out = []
    if m["rerun_max_abs_diff"] > 0:
        out.append({"finding": "stochastic_reference",
                    "detail": f"two calls on the same inputs differ by up to {m['rerun_max_abs_diff']:.3g}"})
    if m["zero_allclose"]:
        out.append({"finding": "zero_output_passes",
                    "detail": f"an all-zero output passes allclose(atol={atol:g}, rtol={rtol:g}): "
                              f"the reference's outputs are at most {m['zero_max_abs_diff']:.3g}"})
    scale = m["output_scale"]
    if scale == 0 or m["input_change_max_abs"] <= INSENSITIVE_RELATIVE_CHANGE * scale:
        out.append({"finding": "input_insensitive",
                    "detail": f"new inputs change the output by at most {m['input_change_max_abs']:.3g} "
                              f"(scale {scale:.3g}): a constant could pass"})
    return out
