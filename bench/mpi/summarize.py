"""Tables of bench/mpi/h200_scaleout.sh's results: per stage and GPU count, evaluations per
minute (rank 0's --mpi-stats), how busy the workers' measurement slots were, and the GPUs'
mean utilization from nvidia-smi while the command ran. Usage: summarize.py OUT_DIR"""
import csv
import glob
import json
import os
import sys


def gpu_utilization(path):
    per_gpu = {}
    for row in csv.reader(open(path)):
        if len(row) == 2 and row[1].strip().isdigit():
            per_gpu.setdefault(int(row[0]), []).append(int(row[1]))
    return {g: sum(v) / len(v) for g, v in sorted(per_gpu.items()) if v}


def main(out):
    rows = []
    for stats_file in sorted(glob.glob(os.path.join(out, "*.stats.json"))):
        label = os.path.basename(stats_file)[: -len(".stats.json")]
        s = json.load(open(stats_file))
        smi = os.path.join(out, label + ".smi.csv")
        util = gpu_utilization(smi) if os.path.exists(smi) else {}
        slots = ", ".join("rank %d GPU %s %.0f%%" % (w["rank"], w["devices"], 100 * w["busy_fraction"]) for w in s["workers"])
        rows.append("| %s | %d | %.0f | %.1f | %.0f%% (%s) | %s |" % (
            label, s["evaluations"], s["wall_s"], s["evaluations_per_minute"], 100 * s["busy_fraction"], slots,
            ", ".join("GPU %d %.0f%%" % (g, u) for g, u in util.items())))
    print("| stage | evaluations | wall s | evaluations/min | measurement slots busy | nvidia-smi utilization (mean) |")
    print("|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main(sys.argv[1])
