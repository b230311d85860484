#!/usr/bin/env python3
"""A grid of MCTS configurations over every search-quality landscape (issue 29, item 2), and
the choice of the default from it.

Runs `kmcts-bench-search-quality` once for the baselines (linear, beam, egreedy_tree) and in
shards for the grid's MCTS configurations (JOBS processes at a time), then merges the shards'
JSON and ranks the configurations against the best baseline of each landscape.

Ranking. Per landscape and strategy, the cost is the mean over seeds of the evaluations needed
to come within tolerance, a seed that never did counting twice the budget (a penalised mean: it
uses every seed, where the median is censored on the hard landscapes). A configuration's ratio
on a landscape is its cost over the best baseline's cost there; it is ranked by its worst ratio
over the landscapes, then by the geometric mean of its ratios. The report also gives item 4's
own figures: median against the best baseline's median, and seeds reached.

Usage:
  grid.py run --out DIR [--grid first|second|third] [--jobs N] [--seeds 20] [--bench ./build/kmcts-bench-search-quality]
  grid.py rank DIR [--markdown OUT.md] [--json OUT.json --key first|second|third]
  grid.py compare FILE... [--reference mcts/uct]   (e.g. bench/results/mcts-tuning.json and 60-seed runs)
"""

import argparse
import glob
import itertools
import json
import math
import os
import statistics
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

RECORDED = ("bench/search_quality/recorded/matmul-devbox,"
            "bench/search_quality/recorded/layernorm-devbox=problems/cpu/layernorm,"
            "bench/search_quality/recorded/conv3x3-devbox=problems/cpu/conv3x3,"
            "bench/search_quality/recorded/colsum-h200=problems/cuda/colsum")
BASELINES = {"linear": "search.strategy=linear", "beam": "search.strategy=beam",
             "egreedy_tree": "search.strategy=egreedy_tree"}


def grid(which):
    """Label -> option string, for every configuration of the grid `which`."""
    return {"first": first_grid, "second": second_grid, "third": third_grid}[which]()


def first_grid():
    """The grid of 2026-12-04 (144 configurations) that chose the defaults of b671b33."""
    out = {}
    refines = {"off": ["search.refine=off"], "bandit0.9": ["search.refine=bandit", "search.refine_discount=0.9"],
               "bandit1": ["search.refine=bandit", "search.refine_discount=1"]}
    for c, scale, expansion, anneal, chain, refine in itertools.product(
            (0.2, 0.5), ("none", "siblings"), ("first_open", "compare", "adaptive"), (0, 300), (0, 2), refines):
        label = f"c{c} {scale} {expansion} a{anneal} ch{chain} {refine}"
        out[label] = ";".join([
            "search.strategy=mcts", "search.policy=uct", f"search.exploration={c}", f"search.value_scale={scale}",
            f"search.expansion={expansion}", f"search.anneal_selections={anneal}", f"search.chain_length={chain}",
            *refines[refine]])
    return out


def second_grid():
    """Around the first grid's choice (UCT, compare or adaptive expansion, annealed over 300
    selections, the refinement bandit): the tree-wide value scale against the siblings' (each
    with exploration constants on its own scale), a prior on the refine arm, the bandit's
    discount and chains. 80 configurations."""
    out = {}
    scales = {"siblings c0.5": ("siblings", 0.5), "siblings c1": ("siblings", 1.0), "tree c0.1": ("tree", 0.1),
              "tree c0.2": ("tree", 0.2), "tree c0.5": ("tree", 0.5)}
    for scale, expansion, discount, prior, chain in itertools.product(
            scales, ("compare", "adaptive"), (0.9, 1), (0, 3), (0, 2)):
        label = f"{scale} {expansion} bandit{discount} p{prior} ch{chain}"
        name, c = scales[scale]
        out[label] = ";".join([
            "search.strategy=mcts", "search.policy=uct", f"search.exploration={c}", f"search.value_scale={name}",
            f"search.expansion={expansion}", "search.anneal_selections=300", f"search.chain_length={chain}",
            "search.refine=bandit", f"search.refine_discount={discount}", f"search.refine_prior={prior}"])
    return out


def third_grid():
    """The parts of 819be3f on the shipped defaults (UCT c 0.5, sibling-scaled values, exploration
    annealed over the budget, the refinement bandit): expansion by comparison or AB-MCTS's
    Thompson choice with the Planner's priors, x branching 4, 8, 12, x no chains, improving chains
    of 2 or record chains of 3. 18 configurations."""
    out = {}
    chains = {"ch0": ["search.chain_length=0"], "improving2": ["search.chain=improving", "search.chain_length=2"],
              "record3": ["search.chain=record", "search.chain_length=3"]}
    for expansion, branching, chain in itertools.product(("compare", "thompson"), (4, 8, 12), chains):
        out[f"{expansion} b{branching} {chain}"] = ";".join([
            "search.strategy=mcts", f"search.expansion={expansion}", f"search.branching={branching}", *chains[chain]])
    return out


def run(args):
    os.makedirs(args.out, exist_ok=True)
    configs = dict(BASELINES)
    configs.update(grid(args.grid))
    labels = list(configs)
    shards = [labels[i:i + args.per_shard] for i in range(0, len(labels), args.per_shard)]

    def one(index):
        out = os.path.join(args.out, f"shard{index:03d}.json")
        if os.path.exists(out):
            return out
        cmd = [args.bench, "--recorded", RECORDED, "--recorded-sim", "--seeds", str(args.seeds), "--out", out + ".tmp",
               "--markdown", out[:-len(".json")] + ".md"]
        for label in shards[index]:
            cmd += ["--strategy", f"{label}:{configs[label]}"]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.replace(out + ".tmp", out)  # a shard is there whole or not at all: a rerun skips it
        print(f"shard {index + 1}/{len(shards)} done", file=sys.stderr, flush=True)
        return out

    with ThreadPoolExecutor(args.jobs) as pool:
        list(pool.map(one, range(len(shards))))


def load(directory):
    """landscape -> strategy -> (evaluations per seed, 0 = never), and the budget."""
    cells, budget, commands = {}, None, []
    for path in sorted(glob.glob(os.path.join(directory, "shard*.json"))):
        d = json.load(open(path))
        budget = d["budget"]
        commands.append(d["command"])
        for landscape, body in d["landscapes"].items():
            for strategy, cell in body["strategies"].items():
                cells.setdefault(landscape, {})[strategy] = cell["evaluations_to_reach"]
    return cells, budget, commands


def cost(ns, budget):
    return statistics.mean(n if n > 0 else 2 * budget for n in ns)


def median(ns, budget):
    return statistics.median(n if n > 0 else math.inf for n in ns)


def hard(landscape):
    """Issue 29 asks for 0.7x the best baseline on these: rugged and agent-simulated."""
    return landscape == "rugged" or "agent-sim" in landscape


def targets_met(cells, landscapes, strategy, budget):
    """Item 4's checks a configuration passes against the baseline with the lowest median on each
    landscape (ties: more seeds reached): (median no higher, 0.7x on the hard ones, seeds), and
    how many checks there are of each."""
    medians = hard_ok = seeds = 0
    for land in landscapes:
        ns = cells[land][strategy]
        bm = min(BASELINES, key=lambda s: (median(cells[land][s], budget), -sum(n > 0 for n in cells[land][s])))
        mine, theirs = median(ns, budget), median(cells[land][bm], budget)
        medians += mine <= theirs
        if hard(land):
            hard_ok += not math.isinf(mine) and mine <= 0.7 * theirs
        seeds += sum(n > 0 for n in ns) >= sum(n > 0 for n in cells[land][bm])
    return medians, hard_ok, seeds, len(landscapes), sum(hard(l) for l in landscapes)


def rank(args):
    cells, budget, commands = load(args.dir)
    landscapes = list(cells)
    rows = []
    best = {}
    for land in landscapes:
        b = min(BASELINES, key=lambda s: cost(cells[land][s], budget))
        best[land] = b
    for strategy in cells[landscapes[0]]:
        if strategy in BASELINES:
            continue
        ratios = {land: cost(cells[land][strategy], budget) / cost(cells[land][best[land]], budget) for land in landscapes}
        rows.append((max(ratios.values()), math.exp(statistics.mean(math.log(r) for r in ratios.values())), strategy, ratios))
    rows.sort()
    met = {strategy: targets_met(cells, landscapes, strategy, budget) for _, _, strategy, _ in rows}

    def show(v):
        return ">%d" % budget if math.isinf(v) else "%g" % v

    md = ["# MCTS grid over the search-quality landscapes (issue 29, item 2)", "",
          f"{len(rows)} MCTS configurations, {len(next(iter(cells[landscapes[0]].values())))} seeds, budget {budget}. "
          "Cost: mean evaluations to within tolerance, a seed that never got there counted as twice the budget. "
          "Ratio: cost over the best baseline's cost on the landscape (the baseline with the lowest cost). "
          "Ranked by the worst ratio, then the geometric mean.", "",
          "Best baseline per landscape (by cost): " + ", ".join(f"{l}: {best[l]}" for l in landscapes), "",
          "Item 4: of its checks against the baseline with the lowest median per landscape, how many pass "
          "(median no higher / at most 0.7x on the rugged and agent-simulated landscapes / as many seeds reached).", "",
          "| rank | configuration | worst ratio | geo-mean ratio | item 4 | " + " | ".join(landscapes) + " |",
          "|---|---|---|---|---|" + "---|" * len(landscapes)]

    def show_met(strategy):
        m, h, sd, n, nh = met[strategy]
        return f"{m}/{n}, {h}/{nh}, {sd}/{n}"

    for i, (worst, geo, strategy, ratios) in enumerate(rows[:args.top]):
        md.append(f"| {i + 1} | {strategy} | {worst:.2f} | {geo:.2f} | {show_met(strategy)} | " +
                  " | ".join(f"{ratios[l]:.2f}" for l in landscapes) + " |")
    by_met = sorted(rows, key=lambda r: (-sum(met[r[2]][:3]), r[0]))
    md += ["", "The best by item 4's checks passed (all three kinds together; ties by worst ratio):", "",
           "| configuration | item 4 | worst ratio | geo-mean ratio |", "|---|---|---|---|"]
    for worst, geo, strategy, _ in by_met[:args.top_medians]:
        md.append(f"| {strategy} | {show_met(strategy)} | {worst:.2f} | {geo:.2f} |")
    md += ["", "Item 4's figures for the top configurations: median evaluations (seeds reached) against the best baseline's "
           "median (seeds reached), the baseline with the lowest median on each landscape.", "",
           "| configuration | " + " | ".join(landscapes) + " |", "|---|" + "---|" * len(landscapes)]
    for _, _, strategy, _ in rows[:args.top_medians]:
        parts = []
        for land in landscapes:
            ns = cells[land][strategy]
            bm = min(BASELINES, key=lambda s: (median(cells[land][s], budget), -sum(n > 0 for n in cells[land][s])))
            bns = cells[land][bm]
            parts.append(f"{show(median(ns, budget))} ({sum(n > 0 for n in ns)}) vs {bm} {show(median(bns, budget))} "
                         f"({sum(n > 0 for n in bns)})")
        md.append(f"| {strategy} | " + " | ".join(parts) + " |")
    md += ["", "Commands (one per shard):", ""] + [f"    {c}" for c in commands[:2]] + [f"    ... ({len(commands)} shards)"]
    text = "\n".join(md) + "\n"
    if args.markdown:
        open(args.markdown, "w").write(text)
    else:
        print(text)
    if args.json:
        # One file for every grid of the study: this grid's ranking goes under its key.
        whole = json.load(open(args.json)) if os.path.exists(args.json) else {}
        whole[args.key] = {"budget": budget, "best_baseline": best, "ranking": [
            {"configuration": s, "worst_ratio": w, "geomean_ratio": g, "ratios": r,
             "item4_met": dict(zip(("median", "hard_0.7x", "seeds", "landscapes", "hard_landscapes"), met[s]))}
            for w, g, s, r in rows]}
        json.dump(whole, open(args.json, "w"), indent=1)


def sign_test(a, b):
    """Paired over seeds: (a fewer, tied, a more) evaluations, a seed never reached counting as the
    most, and the two-sided sign test's p over the untied seeds."""
    key = [(x if x > 0 else math.inf, y if y > 0 else math.inf) for x, y in zip(a, b)]
    fewer, more = sum(x < y for x, y in key), sum(x > y for x, y in key)
    n, k = fewer + more, min(fewer, more)
    p = min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n) if n else 1.0
    return fewer, len(key) - n, more, p


def compare(args):
    """Strategies of several runs of the bench (the same seeds) against the best baseline by
    median on each landscape and, paired seed for seed, against a reference strategy."""
    cells, budget, order = {}, None, []
    for path in args.files:
        d = json.load(open(path))
        if "check_60_seeds" in d:  # the study's file: its 60-seed check of the defaults and baselines,
            # and the runs of the same seeds kept beside a grid (a key ending in _checks)
            check = d["check_60_seeds"]
            body = {land: dict(strategies) for land, strategies in check["landscapes"].items()}
            for key, kept in d.items():
                for r in kept.get("runs", []) if key.endswith("_checks") else []:
                    if r["seeds"] == check["seeds"] and r["budget"] == check["budget"]:
                        for land, strategies in r["evaluations_to_reach"].items():
                            body[land].update(strategies)
            d = check
        else:
            body = {land: {s: c["evaluations_to_reach"] for s, c in b["strategies"].items()} for land, b in d["landscapes"].items()}
        if budget is not None and d["budget"] != budget:
            sys.exit(f"{path}: budget {d['budget']}, the files before it {budget}: not comparable")
        budget = d["budget"]
        for land, strategies in body.items():
            for s, ns in strategies.items():
                if s in cells.get(land, {}) and cells[land][s] != ns:
                    sys.exit(f"{path}: '{s}' on {land} differs from an earlier file's: give runs distinct labels")
                cells.setdefault(land, {})[s] = ns
                if s not in order and s not in BASELINES:
                    order.append(s)
    landscapes = list(cells)
    for land in landscapes:
        missing = [s for s in list(BASELINES) + order if s not in cells[land]]
        if missing:
            sys.exit(f"{land}: no run of {', '.join(missing)} (every file must cover every landscape)")
    if args.reference not in order:
        sys.exit(f"no run of the reference '{args.reference}' (runs: {', '.join(order)})")
    others = [s for s in order if s != args.reference]

    def show(v):
        return ">%d" % budget if math.isinf(v) else "%g" % v

    md = ["| landscape | best baseline, median (seeds) | " + " | ".join(order) + " | " +
          " | ".join(f"{s} against {args.reference}: fewer / tied / more (p)" for s in others) + " |",
          "|---|---|" + "---|" * (len(order) + len(others))]
    for land in landscapes:
        c = cells[land]
        bm = min(BASELINES, key=lambda s: (median(c[s], budget), -sum(n > 0 for n in c[s])))
        theirs = median(c[bm], budget)
        row = [land, f"{bm} {show(theirs)} ({sum(n > 0 for n in c[bm])})"]
        for s in order:
            mine = median(c[s], budget)
            ratio = "-" if math.isinf(mine) or math.isinf(theirs) else "%.2f" % (mine / theirs)
            row.append(f"{show(mine)} ({sum(n > 0 for n in c[s])}) {ratio}")
        for s in others:
            f, t, m, p = sign_test(c[s], c[args.reference])
            row.append(f"{f} / {t} / {m} (p = {p:.2f})")
        md.append("| " + " | ".join(row) + " |")
    md.append("")
    for s in order:
        m, h, sd, n, nh = targets_met(cells, landscapes, s, budget)
        md.append(f"- {s}: median no higher on {m} of {n}, 0.7x on {h} of {nh}, as many seeds on {sd} of {n}")
    print("\n".join(md))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--out", required=True)
    r.add_argument("--jobs", type=int, default=2)
    r.add_argument("--grid", choices=("first", "second", "third"), default="third",
                   help="first: the 144 configurations of 2026-12-04; second: around its choice (80); third: "
                        "the Thompson expansion, branching and chain rules of 2026-12-06 (18)")
    r.add_argument("--seeds", type=int, default=20)
    r.add_argument("--per-shard", type=int, default=4)
    r.add_argument("--bench", default="./build/kmcts-bench-search-quality")
    k = sub.add_parser("rank")
    k.add_argument("dir")
    k.add_argument("--markdown")
    k.add_argument("--json", help="the study's JSON file: this grid's ranking is written under --key, others kept")
    k.add_argument("--key", default="third", help="the grid's key in --json (first, second, third)")
    k.add_argument("--top", type=int, default=25)
    k.add_argument("--top-medians", type=int, default=8)
    c = sub.add_parser("compare", help="strategies of bench runs against the best baseline and a reference, paired")
    c.add_argument("files", nargs="+", help="kmcts-bench-search-quality JSON files of the same seeds (or the study's "
                                            "JSON, for its 60-seed check)")
    c.add_argument("--reference", default="mcts/uct")
    a = p.parse_args()
    {"run": run, "rank": rank, "compare": compare}[a.cmd](a)


if __name__ == "__main__":
    main()
