#!/usr/bin/env python3
"""Fits the coefficients of the memory estimate (sim/config/MemoryEstimate.cpp) and reports its
error on runs it did not fit: whole-process peak RSS (/usr/bin/time) of `fabricsim run`.

The model: peak RSS = base + per_cable * cables + per_rank * ranks, per backend; the hybrid backend
is the flow backend's fabric and ranks once per flow-level run at once (the run and its replicas).
- base and per_cable: least squares over fat-trees k = 8, 16, 32 with a 4 KiB permutation (a
  pattern's state per GPU is in per_cable: every GPU has a NIC cable);
- per_rank: a training job's ranks, from one run each (packet: the 1,024-GPU validation job;
  flow: Llama-3 405B on 8,192 GPUs), less what base and per_cable give for its fabric.
Held out: fat-tree k = 48, the 98,304-GPU rail-optimized fabric, the 1,024-GPU job on the flow
backend, the 8,192-GPU job on the hybrid backend (DCQCN); with --98k also Llama-3 405B at
98,304 GPUs on the flow backend (a minute or two).

Prints the coefficients (to copy into MemoryEstimate.cpp) and a table: measured, estimated by the
fitted model, and by the binary's own estimate (summary.memory_estimate.bytes, the constants it was
built with).
Usage: scripts/memory_model.py [--98k] [--binary PATH]
"""
import argparse
import datetime
import os
import sys

import figure_runs

ROOT = figure_runs.ROOT
MIB = 1024.0 * 1024.0
TINY = os.path.join(ROOT, "tests/data/memory-tiny-permutation.yaml")
LLAMA_8K = ["--workload", os.path.join(ROOT, "workloads/llama3-405b.yaml"), "--workload-set", "parallelism.dp=64",
            "--workload-set", "parallelism.global_batch=1024"]
CCVAL_1K = ["--workload", os.path.join(ROOT, "workloads/cc-validation-1k.yaml")]
FAT_TREE = "topologies/fat-tree-k16-100g.yaml"


def measure(binary, name, topology, backend, args):
    r, wall, rss = figure_runs.run(binary, topology, ["--backend", backend] + args)
    m = r["summary"]["memory_estimate"]
    return {"name": name, "backend": backend, "links": m["links"], "ranks": m["program_ranks"], "copies": m["copies"],
            "rss": rss * MIB, "binary_estimate": m["bytes"], "wall": wall}


def fit_fabric(rows):
    """Least squares of rss = base + per_cable * links over `rows`."""
    n = len(rows)
    sx = sum(r["links"] for r in rows)
    sy = sum(r["rss"] for r in rows)
    sxx = sum(r["links"] ** 2 for r in rows)
    sxy = sum(r["links"] * r["rss"] for r in rows)
    per_cable = (n * sxy - sx * sy) / (n * sxx - sx * sx)
    return (sy - per_cable * sx) / n, per_cable


def estimate(c, row):
    base, per_cable, per_rank = c[row["backend"] if row["backend"] != "hybrid" else "flow"]
    return base + row["copies"] * (per_cable * row["links"] + per_rank * row["ranks"])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--98k", dest="big", action="store_true", help="also Llama-3 405B at 98,304 GPUs (flow)")
    ap.add_argument("--binary", default=os.path.join(ROOT, "build/release/fabricsim"))
    a = ap.parse_args()
    tiny = ["--workload", TINY]
    coeffs = {}
    fitted, held = [], []
    for backend in ("packet", "flow"):
        rows = [measure(a.binary, f"fat-tree k={k}, 4 KiB permutation", FAT_TREE, backend,
                        tiny + ["--set", f"topology.radix={k}"]) for k in (8, 16, 32)]
        base, per_cable = fit_fabric(rows)
        if backend == "packet":
            job = measure(a.binary, "rail-optimized 1K, validation job", "topologies/rail-optimized-1k.yaml",
                          backend, CCVAL_1K)
        else:
            job = measure(a.binary, "rail-optimized 8K, Llama-3 405B", "topologies/rail-optimized-8k.yaml",
                          backend, LLAMA_8K)
        per_rank = (job["rss"] - base - per_cable * job["links"]) / job["ranks"]
        coeffs[backend] = (base, per_cable, per_rank)
        fitted += rows + [job]
    held.append(measure(a.binary, "fat-tree k=48, 4 KiB permutation", FAT_TREE, "packet",
                        tiny + ["--set", "topology.radix=48"]))
    held.append(measure(a.binary, "fat-tree k=48, 4 KiB permutation", FAT_TREE, "flow",
                        tiny + ["--set", "topology.radix=48"]))
    for backend in ("packet", "flow"):
        held.append(measure(a.binary, "rail-optimized 98K, 4 KiB permutation", "topologies/rail-optimized-98k.yaml",
                            backend, tiny))
    held.append(measure(a.binary, "rail-optimized 1K, validation job", "topologies/rail-optimized-1k.yaml", "flow",
                        CCVAL_1K))
    held.append(measure(a.binary, "rail-optimized 8K, Llama-3 405B, DCQCN", "topologies/rail-optimized-8k.yaml",
                        "hybrid", LLAMA_8K + ["--cc", "dcqcn"]))
    if a.big:
        held.append(measure(a.binary, "rail-optimized 98K, Llama-3 405B", "topologies/rail-optimized-98k.yaml",
                            "flow", ["--workload", os.path.join(ROOT, "workloads/llama3-405b.yaml")]))

    print(f"Generated by scripts/memory_model.py{' --98k' if a.big else ''} on {datetime.date.today().isoformat()} "
          f"({figure_runs.machine()}), peak RSS whole-process, one run each:\n")
    print("| backend | base MiB | per cable KiB | per training rank KiB |")
    print("|---|---|---|---|")
    for b, (base, cable, rank) in coeffs.items():
        print(f"| {b} | {base / MIB:.1f} | {cable / 1024:.2f} | {rank / 1024:.2f} |")
    print()
    print("| run | backend | cables | ranks running programs | runs at once | peak RSS MiB | fitted model MiB (error) | "
          "binary's estimate MiB (error) | wall s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for label, rows in (("fit", fitted), ("held out", held)):
        for r in rows:
            e = estimate(coeffs, r)
            b = r["binary_estimate"]
            print(f"| {label}: {r['name']} | {r['backend']} | {r['links']:,} | {r['ranks']:,} | {r['copies']} | "
                  f"{r['rss'] / MIB:.0f} | {e / MIB:.0f} ({100 * (e / r['rss'] - 1):+.0f}%) | "
                  f"{b / MIB:.0f} ({100 * (b / r['rss'] - 1):+.0f}%) | {r['wall']:.1f} |")
    # The constants to copy into sim/config/MemoryEstimate.cpp go to stderr: stdout is the README block.
    print("\nconstants for sim/config/MemoryEstimate.cpp (bytes):", file=sys.stderr)
    for b, (base, cable, rank) in coeffs.items():
        print(f"  {b}: base {base:.4g}, per cable {cable:.4g}, per rank {rank:.4g}", file=sys.stderr)


if __name__ == "__main__":
    main()
