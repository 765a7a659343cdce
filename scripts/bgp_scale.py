#!/usr/bin/env python3
"""Regenerates the README's BGP-at-scale table and the paragraph after it: what RFC 7938 eBGP
costs to converge from start (every session up, every leaf announcing its prefix into empty
tables) on the fat-trees k=16 and k=32 and on the 98K-GPU rail-optimized fabric, as
whole-program runs of `fabricsim run` with `routing.control_plane: bgp` on the flow backend with a
tiny workload (one 4 KiB message), so that the run is almost all topology, tables and BGP.
Reports the whole process's wall time and peak RSS (/usr/bin/time -v) and the results'
`routing.bgp` section: host CPU time of the initial convergence, its simulated time, messages,
distinct AS paths and the control plane's own memory. The paragraph states the 98K figures
against the targets (under 2 GiB, under a minute of CPU on one core), whether the baseline
computed the same start (messages, FIB changes, AS paths, simulated times) and the machine's load
average during the runs. With --baseline BINARY it runs that binary too (wall time, peak RSS,
and its BGP CPU time when its results have a `routing.bgp` section).

EARLIER holds the figures an earlier run of this script measured with --baseline for the
release before interned AS paths, whose binary is no longer built; the paragraph quotes them
with their date, and scales the k=32 memory by the message count to estimate that release at 98K.

Usage: scripts/bgp_scale.py [--sizes k16,k32,98k] [--binary PATH]
                            [--baseline PATH [--baseline-sizes k16,k32] [--baseline-label TEXT]]
"""
import argparse
import datetime
import os
import textwrap

import figure_runs

ROOT = figure_runs.ROOT
SIZES = {
    "k16": ("topologies/fat-tree-k16-100g.yaml", "fat-tree k=16, 1,024 GPUs"),
    "k32": ("topologies/fat-tree-k32-100g.yaml", "fat-tree k=32, 8,192 GPUs"),
    "98k": ("topologies/rail-optimized-98k.yaml", "rail-optimized, 98,304 GPUs"),
}
SHORT = {"k16": "k=16", "k32": "k=32", "98k": "98K GPUs"}
ARGS = ["--workload", os.path.join(ROOT, "workloads/incast-16.yaml"), "--workload-set", "incast.senders=1",
        "--workload-set", "message_size=4KiB", "--backend", "flow", "--set", "routing.control_plane=bgp"]
# scripts/bgp_scale.py --baseline on 2026-11-24 (2 vCPU AMD EPYC), the release before interned AS
# paths and shared RIB rows: whole run wall s and peak RSS MiB at k=32.
EARLIER = {"date": "2026-11-24", "k32": (36.2, 2506)}
# scripts/bgp_scale.py --baseline on 2026-11-24 (2 vCPU AMD EPYC), commit 21d6268 (before the
# faster BGP start) at 98,304 GPUs: BGP start CPU s and peak RSS MiB.
BEFORE_FAST_START = {"date": "2026-11-24", "commit": "21d6268", "98k": (84.1, 1373)}
TARGET_RSS_GIB = 2.0
TARGET_CPU_S = 60.0


def model(bgp):
    """What the model computed (as opposed to what it cost): equal in two binaries that differ only in speed."""
    return tuple(bgp[k] for k in ("start_updates_sent", "start_withdrawals_sent", "start_fib_changes", "as_paths",
                                  "start_last_fib_change_s", "start_quiet_s"))


def paragraph(rows, baseline, label, load):
    """The prose after the table, every figure taken from this run (or EARLIER, dated)."""
    out = []
    big = rows.get("98k")
    if big:
        rss_gib = big["rss"] / 1024
        cpu = big["cpu"]
        out.append(
            f"At 98,304 GPUs ({big['switches']:,} switches) the whole process peaked at {rss_gib:.2f} GiB, "
            f"{'within' if rss_gib < TARGET_RSS_GIB else 'above'} the {TARGET_RSS_GIB:g} GiB target, and BGP's "
            f"initial convergence took {cpu:.1f} s of CPU on one core, "
            f"{'within' if cpu < TARGET_CPU_S else 'above'} the one-minute target.")
        if "98k" in baseline and baseline["98k"][2] is not None:
            out.append(f"The baseline ({label}) took {baseline['98k'][2]:.1f} s of CPU for the same convergence "
                       f"and peaked at {baseline['98k'][1] / 1024:.2f} GiB.")
        elif not baseline:
            cpu0, rss0 = BEFORE_FAST_START["98k"]
            out.append(f"Commit {BEFORE_FAST_START['commit']}, before the faster start, took {cpu0:.1f} s of CPU for "
                       f"the same convergence and peaked at {rss0 / 1024:.2f} GiB (measured by this script with "
                       f"--baseline on {BEFORE_FAST_START['date']}).")
    compared = [size for size in rows if size in baseline and baseline[size][3] is not None]
    if compared:
        same = [size for size in compared if baseline[size][3] == rows[size]["model"]]
        differ = [size for size in compared if size not in same]
        out.append(f"The baseline's messages, FIB changes, AS paths and simulated times of the start are "
                   + (f"the same as these at {', '.join(SHORT[x] for x in same)}" if same else "")
                   + (" and " if same and differ else "")
                   + (f"different at {', '.join(SHORT[x] for x in differ)}" if differ else "") + ".")
    if "k32" in rows:
        wall, rss = EARLIER["k32"]
        text = (f"The release before interned AS paths and shared RIB rows needed {rss:,} MiB and {wall:.1f} s "
                f"for the whole k=32 run (measured by this script with --baseline on {EARLIER['date']}; that "
                f"binary is no longer built)")
        if big:
            scaled = rss * big["messages"] / rows["k32"]["messages"] / 1024
            text += (f"; scaled by the message count ({big['messages'] / rows['k32']['messages']:.1f} times "
                     f"k=32's), it would need about {scaled:.0f} GiB at 98,304 GPUs")
        out.append(text + ".")
    out.append(
        f"Load average over the last minute was {load[0]:.1f} when the runs started and {load[1]:.1f} when they "
        f"ended, on {os.cpu_count()} vCPUs: on a shared machine wall times are upper bounds, and CPU time is "
        f"the figure to compare.")
    return textwrap.fill(" ".join(out), width=98, break_on_hyphens=False)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="k16,k32,98k")
    ap.add_argument("--binary", default=os.path.join(ROOT, "build/release/fabricsim"))
    ap.add_argument("--baseline", help="another fabricsim binary to compare with")
    ap.add_argument("--baseline-sizes", default="k16,k32", help="sizes to run the baseline on")
    ap.add_argument("--baseline-label", default="the baseline binary", help="what the baseline is, for the paragraph")
    a = ap.parse_args()
    load0 = os.getloadavg()[0]
    print(f"Generated by scripts/bgp_scale.py on {datetime.date.today()} ({figure_runs.machine()}); "
          f"one run each.\n")
    head = ("| fabric | switches | whole run s | peak RSS MiB | BGP start CPU s | "
            "last FIB change (simulated) s | messages | AS paths | BGP memory MiB |")
    sep = "|---|---|---|---|---|---|---|---|---|"
    if a.baseline:
        head += " baseline BGP start CPU s | baseline run s | baseline RSS MiB |"
        sep += "---|---|---|"
    print(head)
    print(sep)
    rows, baseline = {}, {}
    for size in a.sizes.split(","):
        topo, label = SIZES[size]
        r, wall, rss = figure_runs.run(a.binary, topo, ARGS)
        b = r["routing"]["bgp"]
        messages = b["start_updates_sent"] + b["start_withdrawals_sent"]
        rows[size] = {"switches": r["summary"]["switches"], "rss": rss, "cpu": b["start_cpu_s"], "messages": messages,
                      "model": model(b)}
        row = (f"| {label} | {r['summary']['switches']:,} | {wall:.1f} | {rss:.0f} | "
               f"{b['start_cpu_s']:.1f} | {b['start_last_fib_change_s']:.3f} | "
               f"{messages:,} | {b['as_paths']:,} | {b['memory_bytes'] / 2**20:.0f} |")
        if a.baseline and size in a.baseline_sizes.split(","):
            br, bwall, brss = figure_runs.run(a.baseline, topo, ARGS)
            bb = br.get("routing", {}).get("bgp")
            bcpu = bb["start_cpu_s"] if bb else None
            baseline[size] = (bwall, brss, bcpu, model(bb) if bb else None)
            row += f" {'-' if bcpu is None else f'{bcpu:.1f}'} | {bwall:.1f} | {brss:.0f} |"
        elif a.baseline:
            row += " - | - | - |"
        print(row, flush=True)
    print()
    print(paragraph(rows, baseline, a.baseline_label, (load0, os.getloadavg()[0])))


if __name__ == "__main__":
    main()
