#!/usr/bin/env python3
"""Prints the README's Performance figures beside the permutation tables (perf_permutations.py):

  --part training   whole-process wall time, events and peak RSS (/usr/bin/time -v, one run at a
                    time) of the default scenario and the 64-GPU nccl-tests all_reduce sweep on the
                    packet backend, `fabricsim trace` of GPT-3 175B on rail-optimized-256, and the
                    bytes that job's iteration puts through the NICs (from a flow-backend run:
                    the same transfers), with the data packets they make at the fabric's MTU;
  --part topology   `fabricsim topo` of the 98,304-GPU rail-optimized fabric: counts, wall, RSS;
  --part bench      the micro-benchmarks (build/release/tests/fabricsim_bench, Google Benchmark):
                    median of 3 repetitions of each, with its counters.

Usage: scripts/perf_tables.py --part training|topology|bench [--binary PATH]
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile

import figure_runs

ROOT = figure_runs.ROOT
BENCHMARKS = ("BM_EventQueueHold|BM_PacketPoolAllocRelease|BM_FiveTupleHash|BM_EcmpNextHop|"
              "BM_PacketPermutationFatTree|BM_ForwardingSteadyState|BM_MaxMinChurn|BM_FlowTrainingJob|BM_PacketEpisode|"
              "BM_HybridTrainingJob|BM_ExecuteComputeOnly|BM_BgpStartFatTree")


def training(binary):
    print("| run | simulated | wall | events | peak RSS |")
    print("|---|---|---|---|---|")
    runs = [("default scenario (`scripts/run.sh`: GPT 1.3B, 64 GPUs, 1 iteration)", "topologies/default.yaml", []),
            ("nccl-tests all_reduce 1 MiB-256 MiB, 64 GPUs (`workloads/nccl-allreduce.yaml`)", "topologies/default.yaml",
             ["--workload", os.path.join(ROOT, "workloads/nccl-allreduce.yaml")])]
    for label, topo, args in runs:
        r, wall, rss = figure_runs.run(binary, topo, args)
        s = r["summary"]
        print(f"| {label} | {s['sim_time_s'] * 1e3:.1f} ms | {figure_runs.wall_text(wall)} | {s['events'] / 1e6:.1f} M | "
              f"{rss:.0f} MiB |", flush=True)
    gpt3 = ["--workload", os.path.join(ROOT, "workloads/gpt3-175b.yaml")]
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "gpt3.trace.json")
        _, wall, rss = figure_runs.timed([binary, "trace", "topologies/rail-optimized-256.yaml"] + gpt3 + ["--out", out])
        with open(out) as f:
            trace = json.load(f)
        ops = sum(len(p.get("ops", [])) for p in trace.get("programs", []))
        print(f"| `fabricsim trace` of GPT-3 175B on rail-optimized-256 ({ops:,} ops in "
              f"{len(trace.get('programs', []))} programs, {os.path.getsize(out) / 2**20:.1f} MiB) | | "
              f"{figure_runs.wall_text(wall)} | | {rss:.0f} MiB |")
    r, _, _ = figure_runs.run(binary, "topologies/rail-optimized-256.yaml", gpt3 + ["--backend", "flow"])
    topo = json.loads(subprocess.run([binary, "topo", os.path.join(ROOT, "topologies/rail-optimized-256.yaml"),
                                      "--json"], capture_output=True, text=True, check=True).stdout)
    sent = r["network"]["bytes_sent"]
    print(f"\nGPT-3 175B (TP 8, PP 8, DP 4) on rail-optimized-256, one iteration: {sent / 2**40:.2f} TiB through "
          f"the NICs, about {sent / topo['mtu_bytes'] / 1e6:,.0f} M data packets of {topo['mtu_bytes']:,} B "
          f"(network.bytes_sent of a flow-backend run of the same job); its packet-backend wall time and peak RSS are "
          f"the rail-aligned row of the placement table (`scripts/gpt3_placement_table.py`).")


def topology(binary):
    out, wall, rss = figure_runs.timed([binary, "topo", "topologies/rail-optimized-98k.yaml", "--json"])
    t = json.loads(out)
    print(f"`fabricsim topo topologies/rail-optimized-98k.yaml` builds the {t['gpus']:,}-GPU rail-optimized fabric "
          f"({t['hosts']:,} hosts, {t['switches']['total']:,} switches, "
          f"{t['links']['total']:,} links) and prints its summary in "
          f"{figure_runs.wall_text(wall)}, whole process, peak RSS {rss:.0f} MiB.")


def si(v):
    """3 significant figures with a K/M/G suffix."""
    for div, suffix in ((1e9, " G"), (1e6, " M"), (1e3, " K")):
        if abs(v) >= div:
            return f"{v / div:.3g}{suffix}"
    return f"{v:.3g}"


def bench(build):
    exe = os.path.join(build, "tests", "fabricsim_bench")
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "bench.json")
        p = subprocess.run([exe, f"--benchmark_filter={BENCHMARKS}", "--benchmark_repetitions=3",
                            "--benchmark_report_aggregates_only=true", f"--benchmark_out={out}",
                            "--benchmark_out_format=json"], cwd=ROOT, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            sys.exit(f"fabricsim_bench failed ({p.returncode}): {p.stderr[-2000:]}")
        with open(out) as f:
            results = json.load(f)
    print("| benchmark | median real time per iteration | median CPU time | counters (median) |")
    print("|---|---|---|---|")
    skip = {"name", "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions",
            "threads", "aggregate_name", "aggregate_unit", "iterations", "real_time", "cpu_time", "time_unit",
            "repetition_index"}
    for b in results["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        unit = b["time_unit"]
        counters = ", ".join(f"{k} {si(v)}" for k, v in b.items() if k not in skip and isinstance(v, (int, float)))
        print(f"| `{b['run_name']}` | {b['real_time']:,.4g} {unit} | {b['cpu_time']:,.4g} {unit} | {counters} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--part", choices=["training", "topology", "bench"], required=True)
    ap.add_argument("--binary", default=os.path.join(ROOT, "build/release/fabricsim"))
    a = ap.parse_args()
    print(f"Generated by scripts/perf_tables.py --part {a.part} on {datetime.date.today()} ({figure_runs.machine()}), "
          f"{figure_runs.version(a.binary)}; load average {os.getloadavg()[0]:.1f} at the start.\n")
    if a.part == "training":
        training(a.binary)
    elif a.part == "topology":
        topology(a.binary)
    else:
        bench(os.path.dirname(a.binary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
