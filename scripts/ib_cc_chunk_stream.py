#!/usr/bin/env python3
"""A long message meeting streams of short chunks on one InfiniBand link: packet against hybrid and
flow backends, on credits alone and under IB CC. The smallest case of the 4,096-GPU job's gap
(docs/hybrid-backend.md, Limits): there the backward pass's 4 MiB pipeline sends share links with
the data-parallel tree's 64 KiB chunks, and IB CC throttles a few of them far below a fair share.

topologies/leafspine-16.yaml as InfiniBand at 400 Gb/s (64 MiB switch buffer, ECN/FECN marking
400 KB - 1,600 KB, pmax 0.2, as topologies/rail-optimized-4k.yaml), ib-sm routing. GPU 0 sends one
--big-mib message to GPU 8; --senders hosts (GPUs 4, 12, 1, ...) each run --chains chains of
--chunks sends of --chunk-kib to GPU 8, each chain one send at a time (a stream, as a tree's
pipeline forwards chunk after chunk). Printed per backend and scheme, mean over --seeds seeds: the
long message's FCT and when the last chunk arrives (the job's end), us.
Usage: scripts/ib_cc_chunk_stream.py [--senders 3] [--chains 4] [--chunks 32] [--chunk-kib 64]
                                     [--big-mib 4] [--seeds 3] [--binary PATH]
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
SETS = ["links.technology=infiniband", "links.host_speed=400Gbps", "links.fabric_speed=400Gbps",
        "switch.buffer=64MiB", "switch.ecn.kmin=400KB", "switch.ecn.kmax=1600KB", "switch.ecn.pmax=0.2"]
CHUNK_GPUS = [4, 12, 1, 5, 13, 2, 6, 14]


def trace(a):
    k = a.senders
    n = k + 2  # GPU 0's sender, the chunk senders, the receiver (GPU 8)
    send = lambda stream, off, b: {"type": "send", "stream": stream, "label": 0, "comm": 0, "peer_offset": off, "bytes": b}
    recv = lambda stream, off, b: {"type": "recv", "stream": stream, "label": 0, "comm": 0, "peer_offset": off, "bytes": b}
    big, chunk = a.big_mib << 20, a.chunk_kib << 10
    progs = [{"streams": ["big"], "labels": ["big"], "ops": [send(0, n - 1, big)]}]
    for i in range(1, k + 1):
        progs.append({"streams": [f"chain{c}" for c in range(a.chains)], "labels": ["chunk"],
                      "ops": [send(c, n - 1 - i, chunk) for c in range(a.chains) for _ in range(a.chunks)]})
    ops, streams = [recv(0, -(n - 1), big)], ["big"]
    for i in range(1, k + 1):
        for c in range(a.chains):
            streams.append(f"from{i}-{c}")
            ops += [recv(len(streams) - 1, -(n - 1 - i), chunk) for _ in range(a.chunks)]
    progs.append({"streams": streams, "labels": ["recv"], "ops": ops})
    return {"format": "fabricsim-trace", "version": 1, "name": "ib-cc-chunk-stream", "generator": "ib_cc_chunk_stream.py",
            "ranks": n, "iterations": 1,
            "collectives": {"algorithm": "auto", "channels": 1, "nvlink_channels": 1, "step_latency_nvlink_ps": 600000,
                            "step_latency_network_ps": 2700000, "protocol_efficiency": 1.0,
                            "chunk_size_bytes": 1048576, "traffic_class": 0},
            "communicators": [{"name": "p", "groups": [list(range(n))]}],
            "programs": progs, "program_of_rank": [[i, 1] for i in range(n)],
            "placement": [0] + CHUNK_GPUS[:k] + [8]}


def one(binary, workload, backend, cc, seed, d):
    out, tl = os.path.join(d, "r.json"), os.path.join(d, "t.json")
    subprocess.run([binary, "run", os.path.join(ROOT, "topologies/leafspine-16.yaml"), "--workload", workload,
                    "--routing", "ib-sm", "--cc", cc, "--backend", backend, "--seed", str(seed), "--quiet",
                    "--out", out, "--timeline", tl] + [x for s in SETS for x in ("--set", s)], check=True)
    ev = json.load(open(tl))["traceEvents"]
    rank0 = {e["tid"] for e in ev if e.get("name") == "thread_name" and e["args"]["name"].startswith("rank 0 ")}
    big = [e["dur"] for e in ev if e.get("ph") == "X" and e["tid"] in rank0]
    if len(big) != 1:
        sys.exit(f"expected one send of GPU 0 in the timeline, found {len(big)}")
    return big[0], json.load(open(out))["jobs"][0]["jct_s"] * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--senders", type=int, default=3)
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--chunks", type=int, default=32)
    ap.add_argument("--chunk-kib", type=int, default=64)
    ap.add_argument("--big-mib", type=int, default=4)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--binary", default=os.path.join(ROOT, "build/release/fabricsim"))
    a = ap.parse_args()
    if not 1 <= a.senders <= len(CHUNK_GPUS) or min(a.chains, a.chunks, a.chunk_kib, a.big_mib, a.seeds) < 1:
        sys.exit(f"expected 1-{len(CHUNK_GPUS)} senders and positive chains, chunks, sizes and seeds")
    with tempfile.TemporaryDirectory() as d:
        wl = os.path.join(d, "w.yaml")
        with open(os.path.join(d, "w.trace.json"), "w") as f:
            json.dump(trace(a), f)
        with open(wl, "w") as f:
            f.write("kind: trace\ntrace: w.trace.json\n")
        print(f"Generated by scripts/ib_cc_chunk_stream.py --senders {a.senders} --chains {a.chains} --chunks {a.chunks} "
              f"--chunk-kib {a.chunk_kib} --big-mib {a.big_mib} --seeds {a.seeds} on {datetime.date.today()} "
              f"({figure_runs.machine()}); mean over seeds 1-{a.seeds}, us:")
        print()
        print("| backend | scheme | long message FCT | last chunk (job end) |")
        print("|---|---|---|---|")
        for backend in ("packet", "hybrid", "flow"):
            for cc, name in (("none", "credits"), ("ibcc", "credits + IB CC")):
                rows = [one(a.binary, wl, backend, cc, s, d) for s in range(1, a.seeds + 1)]
                print(f"| {backend} | {name} | {sum(r[0] for r in rows) / len(rows):.0f} | "
                      f"{sum(r[1] for r in rows) / len(rows):.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
