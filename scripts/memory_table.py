#!/usr/bin/env python3
"""Regenerates the README's figures on memory against iterations (section "Memory"): whole-process
peak RSS and wall time of Llama-3 405B on the flow backend at 8,192 GPUs (rail-optimized-8k, TP 8,
PP 16, DP 64, 16 micro-batches per pipeline) for 1, 2 and 3 iterations, with the results' own
summary.peak_rss_bytes (read after the results file is written) and the flow backend's tables
(summary.flow_model.memory_bytes); with --98k also one iteration at 98,304 GPUs (DP 768), which
takes a minute or two.

Usage: scripts/memory_table.py [--98k] [--binary PATH]
"""
import argparse
import datetime
import os

import figure_runs

ROOT = figure_runs.ROOT
WORKLOAD = os.path.join(ROOT, "workloads/llama3-405b.yaml")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--98k", dest="big", action="store_true", help="also the 98,304-GPU iteration")
    ap.add_argument("--binary", default=os.path.join(ROOT, "build/release/fabricsim"))
    a = ap.parse_args()
    rows = []
    for it in (1, 2, 3):
        r, wall, rss = figure_runs.run(a.binary, "topologies/rail-optimized-8k.yaml",
                                       ["--backend", "flow", "--workload", WORKLOAD,
                                        "--workload-set", "parallelism.dp=64",
                                        "--workload-set", "parallelism.global_batch=1024",
                                        "--workload-set", f"iterations={it}"])
        rows.append(("8,192", it, r, wall, rss))
    if a.big:
        r, wall, rss = figure_runs.run(a.binary, "topologies/rail-optimized-98k.yaml",
                                       ["--backend", "flow", "--workload", WORKLOAD])
        rows.append(("98,304", 1, r, wall, rss))
    print(f"{datetime.date.today().isoformat()}, {figure_runs.machine()}, flow backend, Llama-3 405B:\n")
    print("| GPUs | iterations | transfers | wall s | peak RSS MiB (/usr/bin/time) | "
          "summary.peak_rss_bytes MiB | flow backend tables MiB |")
    print("|---|---|---|---|---|---|---|")
    for gpus, it, r, wall, rss in rows:
        s = r["summary"]
        print(f"| {gpus} | {it} | {r['flows']['count']:,} | {wall:.1f} | {rss:.0f} | "
              f"{s['peak_rss_bytes'] / 2**20:.0f} | {s['flow_model']['memory_bytes'] / 2**20:.1f} |")


if __name__ == "__main__":
    main()
