"""Torch-free parts of kmcts's KernelBench harness: tolerances by generation, timing
statistics, speedups and the leaderboard metrics (fast_p, geometric mean). Tested in CI
(tests/python/test_kb_metrics.py); faithful.py imports it on the GPU machine."""

import math

# KernelBench's allclose tolerance for fp32 problems, by the generation of its harness
# (REFERENCE.md): today's is 1e-4; the paper-era harness used 1e-2. Recorded in every result.
TOLERANCES = {"current": 1e-4, "paper": 1e-2}

# fast_p thresholds the leaderboard reports.
FAST_P = (0.0, 0.5, 0.8, 1.0, 1.5, 2.0)
# Upstream's eval_kernel_against_ref flags a speedup over eager above this as possible reward
# hacking (excessive_speedup_threshold, its default).
EXCESSIVE_SPEEDUP = 10.0


def tolerance(generation):
    if generation not in TOLERANCES:
        raise ValueError(f"unknown tolerance generation '{generation}' (known: {', '.join(TOLERANCES)})")
    return {"generation": generation, "atol": TOLERANCES[generation], "rtol": TOLERANCES[generation]}


def timing_stats(times_ms):
    """Mean (KernelBench's score), sample standard deviation, min, max, n of timings in ms."""
    n = len(times_ms)
    if n == 0:
        raise ValueError("no timings")
    mean = sum(times_ms) / n
    var = sum((t - mean) ** 2 for t in times_ms) / (n - 1) if n > 1 else 0.0
    return {"mean": mean, "std": math.sqrt(var), "min": min(times_ms), "max": max(times_ms), "n": n}


def speedup(reference_ms, candidate_ms):
    """Reference time over candidate time (both means); None when either is missing."""
    if not reference_ms or not candidate_ms:
        return None
    return reference_ms / candidate_ms


def fast_p(results, p):
    """Fraction of all problems (a missing or failed one counts as not fast) whose candidate is
    correct and faster than the reference by more than p. `results`: one dict per problem with
    "correct" (bool) and "speedup" (float or None)."""
    if not results:
        return 0.0
    fast = sum(1 for r in results if r.get("correct") and r.get("speedup") is not None and r["speedup"] > p)
    return fast / len(results)


def geomean_speedup(results):
    """Geometric mean of the speedups of the correct problems; None when none is correct."""
    logs = [math.log(r["speedup"]) for r in results if r.get("correct") and r.get("speedup")]
    return math.exp(sum(logs) / len(logs)) if logs else None


def leaderboard(results):
    """The metrics a leaderboard publishes, over all problems."""
    correct = sum(1 for r in results if r.get("correct"))
    return {
        "problems": len(results),
        "correct": correct,
        "correct_fraction": correct / len(results) if results else 0.0,
        "fast_p": {str(p): fast_p(results, p) for p in FAST_P},
        "geomean_speedup_correct": geomean_speedup(results),
    }


def median(values):
    s = sorted(values)
    n = len(s)
    if n == 0:
        raise ValueError("no values")
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def median_rse(values):
    """Relative standard error of the median, distribution-free: half the width of the
    order-statistic 95% interval (ranks n/2 -+ 0.98 sqrt(n)) over 1.96, over the median."""
    s = sorted(values)
    n = len(s)
    if n < 3:
        return math.inf
    half = 0.98 * math.sqrt(n)
    lo = s[max(0, int(math.floor(n / 2 - half)))]
    hi = s[min(n - 1, int(math.ceil(n / 2 + half)))]
    m = median(s)
    return (hi - lo) / (2 * 1.96) / m if m > 0 else math.inf


def enough_samples(times_ms, spent_s, rse_target=0.005, min_samples=20, min_time_ms=50.0, max_samples=2000,
                   max_time_s=2.0):
    """REFERENCE.md's stopping rule: RSE of the median <= target with at least min_samples and
    min_time_ms of measured time (twice that for sub-10-us kernels), or a cap reached."""
    n = len(times_ms)
    if n >= max_samples or spent_s >= max_time_s:
        return True
    if n < min_samples:
        return False
    floor = min_time_ms * (2 if median(times_ms) < 0.01 else 1)
    return sum(times_ms) >= floor and median_rse(times_ms) <= rse_target


def bootstrap_speedup_ci(reference_ms, candidate_ms, statistic="median", resamples=500, seed=0, level=0.95):
    """Percentile bootstrap interval of statistic(reference) / statistic(candidate), both
    resampled independently with a fixed seed (the same samples give the same interval)."""
    import random
    if not reference_ms or not candidate_ms:
        return None
    stat = median if statistic == "median" else (lambda v: sum(v) / len(v))
    rng = random.Random(seed)
    ratios = []
    for _ in range(resamples):
        r = rng.choices(reference_ms, k=len(reference_ms))
        c = rng.choices(candidate_ms, k=len(candidate_ms))
        ratios.append(stat(r) / stat(c))
    ratios.sort()
    tail = (1 - level) / 2
    return [ratios[int(tail * (resamples - 1))], ratios[int(math.ceil((1 - tail) * (resamples - 1)))]]


def harness_verdict(result):
    """The verdict of one harness JSON line (faithful.py or hardened.py), named as kmcts names
    verdicts; the C++ evaluator reads the same keys (kernelbench_evaluator.cpp)."""
    if "infra_error" in result:
        return "infra_error"
    if not result.get("compiled"):
        return "timeout" if result.get("timeout") else "compile_error"
    for key in ("rejected", "wrong_answer"):
        if key in result:
            return key
    if result.get("error"):
        return "timeout" if result.get("timeout") else "crash"
    return "ok" if result.get("correct") else "wrong_answer"
