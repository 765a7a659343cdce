#!/usr/bin/env python3
"""Regenerates the README's hybrid-backend accuracy table: the validation training jobs
(workloads/cc-validation-1k.yaml on topologies/rail-optimized-1k.yaml; with --4k also
workloads/cc-validation-4k.yaml on topologies/rail-optimized-4k.yaml) under no congestion control,
DCQCN (paper and ConnectX presets) and, on InfiniBand, credits alone and IB CC. For each: exposed
communication per iteration on the packet backend (mean and range over --seeds seeds: its own
seed-to-seed spread), the hybrid backend (mean and range over --hybrid-seeds seeds: which flows an
episode slows is drawn from the seed, as the packet backend draws its marks) and the flow
backend; then each scheme's delta (scheme minus none on the same link technology), and whether the
contract holds (hybrid within 10% of packet; delta within 20% or 1 ms).

Usage: scripts/hybrid_accuracy.py [--binary PATH] [--seeds N] [--hybrid-seeds N] [--4k] [--4k-seeds N]
                                  [--packet-cache DIR] [--heldout]
--heldout runs, instead, the held-out 1K jobs (HELDOUT below: variants of the validation job that
nothing in the hybrid backend was designed against).
The 1K packet runs take about 10 s each on 2 cores, the 4K ones 3 to 4 minutes. --packet-cache DIR
keeps each packet run's exposed communication in DIR with the commit of the binary that ran it,
and reuses it when the binary's commit has the same packet backend (no change under sim/ outside
the flow and hybrid backends' sim/flow and PacketEpisodeModel, topologies/ or workloads/ between
the two commits, neither built from uncommitted changes); the table says which commit the packet
runs come from.
"""
import argparse
import datetime
import json
import os
import subprocess
from statistics import fmean as mean

import figure_runs

ROOT = figure_runs.ROOT
IB = ["--set", "links.technology=infiniband", "--routing", "ib-sm"]
SCHEMES = [
    ("none", "RoCEv2, no CC (lossy)", ["--cc", "none"], None),
    ("dcqcn-paper", "RoCEv2, DCQCN (paper)", ["--cc", "dcqcn"], "none"),
    ("dcqcn-mlx", "RoCEv2, DCQCN (ConnectX)", ["--cc", "dcqcn", "--set", "congestion_control.preset=connectx"],
     "none"),
    ("ib-none", "InfiniBand, credits", ["--cc", "none"] + IB, None),
    ("ib-cc", "InfiniBand, credits + IB CC", ["--cc", "ibcc"] + IB, "ib-none"),
]
JOBS = {
    "1k": ("topologies/rail-optimized-1k.yaml", "workloads/cc-validation-1k.yaml", "1,024 GPUs", []),
    "4k": ("topologies/rail-optimized-4k.yaml", "workloads/cc-validation-4k.yaml", "4,096 GPUs", []),
}
# Held-out jobs (--heldout): 1,024-GPU variants of the validation job that no rule or setting of
# the hybrid backend was designed or checked against: other splits of the same GPUs (more data
# parallelism and shorter pipelines; tensor parallelism of 4, two groups per host) and another
# model shape (longer hidden, shorter sequences: pipeline sends and all-reduces of other sizes).
HELDOUT = {
    "1k-pp4": ("topologies/rail-optimized-1k.yaml", "workloads/cc-validation-1k.yaml",
               "1,024 GPUs, held out: PP 4, DP 32", ["parallelism.pp=4", "parallelism.dp=32",
                                                     "parallelism.global_batch=32"]),
    "1k-tp4": ("topologies/rail-optimized-1k.yaml", "workloads/cc-validation-1k.yaml",
               "1,024 GPUs, held out: TP 4, DP 32", ["parallelism.tp=4", "parallelism.dp=32",
                                                     "parallelism.global_batch=32"]),
    "1k-h4k": ("topologies/rail-optimized-1k.yaml", "workloads/cc-validation-1k.yaml",
               "1,024 GPUs, held out: hidden 4096, sequence 8192",
               ["model.hidden=4096", "model.heads=32", "model.seq_len=8192"]),
}
JOBS.update(HELDOUT)


def exposed(r):
    return r["jobs"][0]["exposed_comm_s"] * 1e3


# What the packet backend's results depend on: a cached run stays valid while none of it changed.
PACKET_INPUTS = ["sim", "topologies", "workloads", "CMakeLists.txt", ":(exclude)sim/flow",
                 ":(exclude)sim/runtime/PacketEpisodeModel.cpp", ":(exclude)sim/runtime/PacketEpisodeModel.h"]


def same_packet_backend(a, b):
    """Whether binaries built at commits a and b (results' `git`) have the same packet backend; a
    binary built from a tree with uncommitted changes ("-dirty") cannot be vouched for."""
    if not a or not b or a.endswith("-dirty") or b.endswith("-dirty"):
        return False
    p = subprocess.run(["git", "-C", ROOT, "diff", "--quiet", a, b, "--"] + PACKET_INPUTS, capture_output=True)
    return p.returncode == 0


def packet_exposed(binary, topo, args, cache, key, commit_under_test):
    """The packet run's exposed communication (ms), from `cache` (a folder) when an earlier run with
    the same packet backend as `commit_under_test` left it there; returns (value, commit it was run
    at)."""
    path = os.path.join(cache, key + ".json") if cache else None
    if path and os.path.exists(path):
        with open(path) as f:
            c = json.load(f)
        if c["args"] == args and same_packet_backend(c["git"], commit_under_test):
            return c["exposed_ms"], c["git"]
    r = figure_runs.run(binary, topo, args)[0]
    commit = r.get("git", "unknown")
    if path and not commit.endswith("-dirty"):
        os.makedirs(cache, exist_ok=True)
        with open(path + ".tmp", "w") as f:
            json.dump({"args": args, "git": commit, "exposed_ms": exposed(r)}, f)
        os.replace(path + ".tmp", path)
    return exposed(r), commit


def table(binary, job, seeds, hybrid_seeds, cache, commit, packet_commits):
    """Prints the job's table; `commit` is the binary's (its results' `git`), and the commits the
    packet runs come from are added to `packet_commits`."""
    topo, work, label, sets = JOBS[job]
    rows = {}
    for key, name, args, base in SCHEMES:
        a = ["--workload", os.path.join(ROOT, work)] + [x for v in sets for x in ("--workload-set", v)] + args
        packet = []
        for s in range(1, seeds + 1):
            v, run_at = packet_exposed(binary, topo, a + ["--backend", "packet", "--seed", str(s)], cache,
                                       f"{job}-{key}-{s}", commit)
            packet.append(v)
            packet_commits.add(run_at)
        hybrid = []
        for s in range(1, hybrid_seeds + 1):
            hybrid.append(exposed(figure_runs.run(binary, topo, a + ["--backend", "hybrid", "--seed", str(s)])[0]))
        f, _, _ = figure_runs.run(binary, topo, a + ["--backend", "flow"])
        rows[key] = dict(name=name, base=base, packet=packet, hybrid=hybrid, flow=exposed(f))
    what = f"{work} with {', '.join(sets)}" if sets else work
    print(f"**{label}** ({topo}, {what}); exposed communication per iteration, ms, mean [min, max] over "
          f"seeds 1-{seeds} (packet) and 1-{hybrid_seeds} (hybrid):\n")
    print("| scheme | packet | hybrid | vs packet | flow | vs packet | delta packet | delta hybrid | contract |")
    print("|---|---|---|---|---|---|---|---|---|")
    for key, r in rows.items():
        p, h = mean(r["packet"]), mean(r["hybrid"])
        ok = abs(h / p - 1) <= 0.10
        dp = dh = None
        if r["base"]:
            b = rows[r["base"]]
            dp = p - mean(b["packet"])
            dh = h - mean(b["hybrid"])
            ok = ok and abs(dh - dp) <= max(0.2 * abs(dp), 1.0)
        fmt = lambda x: f"{x:+.2f}" if x is not None else "-"
        rng = lambda xs: f"{mean(xs):.2f} [{min(xs):.2f}, {max(xs):.2f}]"
        print(f"| {r['name']} | {rng(r['packet'])} | {rng(r['hybrid'])} | {(h / p - 1) * 100:+.1f}% | "
              f"{r['flow']:.2f} | {(r['flow'] / p - 1) * 100:+.1f}% | {fmt(dp)} | {fmt(dh)} | "
              f"{'met' if ok else 'NOT met'} |")
    print()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=os.path.join(ROOT, "build/release/fabricsim"))
    ap.add_argument("--seeds", type=int, default=3, help="packet seeds per scheme, 1K job")
    ap.add_argument("--4k", dest="four", action="store_true", help="also the 4K job (packet runs of 3-4 min)")
    ap.add_argument("--4k-seeds", dest="four_seeds", type=int, default=1)
    ap.add_argument("--hybrid-seeds", type=int, default=8, help="hybrid seeds per scheme (both jobs)")
    ap.add_argument("--packet-cache", help="folder of packet runs to reuse and keep (see above)")
    ap.add_argument("--heldout", action="store_true", help="only the held-out 1K jobs (HELDOUT), --seeds packet seeds")
    a = ap.parse_args()
    flags = (" --heldout" if a.heldout else "") + (" --4k" if a.four else "") + (f" --4k-seeds {a.four_seeds}" if a.four else "") + \
        (f" --seeds {a.seeds}" if a.seeds != 3 else "") + (f" --hybrid-seeds {a.hybrid_seeds}" if a.hybrid_seeds != 8 else "")
    print(f"Generated by scripts/hybrid_accuracy.py{flags} on {datetime.date.today()} ({figure_runs.machine()}).\n")
    commit = figure_runs.commit(a.binary)  # the commit results name as `git`
    packet_commits = set()
    if a.heldout:
        for job in HELDOUT:
            table(a.binary, job, a.seeds, a.hybrid_seeds, a.packet_cache, commit, packet_commits)
        print(f"Hybrid and flow runs at commit {commit}; packet runs at {', '.join(sorted(packet_commits))}.\n")
        return
    table(a.binary, "1k", a.seeds, a.hybrid_seeds, a.packet_cache, commit, packet_commits)
    if a.four:
        table(a.binary, "4k", a.four_seeds, a.hybrid_seeds, a.packet_cache, commit, packet_commits)
    print(f"Hybrid and flow runs at commit {commit}; packet runs at {', '.join(sorted(packet_commits))}.\n")

if __name__ == "__main__":
    main()
