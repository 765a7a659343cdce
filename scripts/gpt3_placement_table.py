#!/usr/bin/env python3
"""Regenerates the README's table "GPT-3 175B on 256 GPUs: placement and routing" and the figures in
the text under it, with date and machine.

Three runs of one training iteration of workloads/gpt3-175b.yaml (TP 8, PP 8, DP 4) on
topologies/rail-optimized-256.yaml, packet backend: rail-aligned placement under ECMP, random hosts
under ECMP, random hosts under adaptive routing (the topology's NIC is reorder-tolerant). Each run takes
10 to 30 minutes on a 2-core machine, so the script runs one seed (seed 1, the `run` default) unless
told --seeds N; with several seeds each cell is mean +- sample standard deviation. The seed draws the
switches' hash seeds and the random hosts.

The columns: the iteration time and exposed communication of jobs[0]; the DP gradient all-reduce
(label dp-allreduce, its most frequent bucket size): mean and max time over its calls, and busbw of the
mean (nccl-tests' definition); the fabric's largest queue and packet drops (network.*); the wall time of
the whole process (/usr/bin/time).

--out DIR (default out/gpt3-placement) keeps each run's results (DIR/<row>-seed<S>.json, with the wall time and peak RSS added under
"figure_run"); --from DIR prints the table from such a directory without running anything.

--resume runs only the (row, seed) pairs whose results are not in --out yet.

Usage: scripts/gpt3_placement_table.py [--seeds 1] [--jobs 1] [--out DIR [--resume] | --from DIR] [--binary PATH]
"""
import argparse
import concurrent.futures
import datetime
import json
import os
import statistics
import textwrap

import figure_runs

ROOT = figure_runs.ROOT
TOPOLOGY = "topologies/rail-optimized-256.yaml"
RANDOM = ["--workload-set", "placement=random-hosts"]
ROWS = [
    ("rail-aligned", "ECMP", "rail-ecmp", ["--routing", "ecmp"]),
    ("random hosts", "ECMP", "rh-ecmp", ["--routing", "ecmp"] + RANDOM),
    ("random hosts", "adaptive", "rh-adaptive", ["--routing", "adaptive"] + RANDOM),
]
MIB = 1 << 20


def run_one(binary, out_dir, key, args, seed, jobs):
    r, wall, rss = figure_runs.run(binary, TOPOLOGY, args + ["--seed", str(seed)])
    r["figure_run"] = {"wall_s": wall, "peak_rss_mib": rss, "args": args + ["--seed", str(seed)], "jobs": jobs,
                       "date": str(datetime.date.today()), "machine": figure_runs.machine()}
    if out_dir:
        with open(os.path.join(out_dir, f"{key}-seed{seed}.json"), "w") as f:
            json.dump(r, f)
    return r


def load(from_dir, key, seed):
    with open(os.path.join(from_dir, f"{key}-seed{seed}.json")) as f:
        return json.load(f)


def most_frequent(job, label):
    colls = [c for c in job["collectives"] if c.get("label") == label]
    return max(colls, key=lambda c: (c["count"], c["bytes"])) if colls else None


def figures(r):
    job = r["jobs"][0]
    assert job["finished"], "the job did not finish: " + " ".join(r["figure_run"]["args"])
    dp = most_frequent(job, "dp-allreduce")
    tp = most_frequent(job, "tp-allreduce")
    net = r["network"]
    return {
        "iteration": job["iterations"][-1]["time_s"],
        "exposed": job["exposed_comm_s"],
        "dp_bytes": dp["bytes"], "dp_ranks": dp["ranks"], "dp_count": dp["count"],
        "dp_mean": dp["time_s"], "dp_max": dp["max_time_s"], "dp_busbw": dp["busbw_GBps"],
        "tp_bytes": tp["bytes"], "tp_mean": tp["time_s"], "tp_busbw": tp["busbw_GBps"],
        "max_queue": net["max_queue_bytes"], "drops": net["packets_dropped"],
        "spine_bytes": net["per_tier"]["leaf-spine up"]["wire_bytes"],
        "queue_tier": max(net["per_tier"].items(), key=lambda t: t[1]["max_queue_bytes"])[0],
        "resent": net["retransmitted_bytes"],
        "compute": job["compute_s"], "critical": job["compute_only_jct_s"], "idle": job["idle_s"],
        "stages": job["pipeline"]["stages"], "microbatches": job["pipeline"]["microbatches"],
        "wall": r["figure_run"]["wall_s"], "rss": r["figure_run"]["peak_rss_mib"],
    }


def cell(xs, fmt, scale=1.0, unit=""):
    m = statistics.mean(xs) * scale
    if len(xs) == 1:
        return f"{m:{fmt}}{unit}"
    return f"{m:{fmt}} ± {statistics.stdev(xs) * scale:{fmt}}{unit}"


def queue_cell(xs):
    """Bytes as mean +- standard deviation, in MiB from 1 MiB on, in KiB below."""
    big = statistics.mean(xs) >= MIB
    return cell(xs, ".1f" if big else ".0f", 1 / MIB if big else 1 / 1024, " MiB" if big else " KiB")


def size(b):
    return f"{b / MIB:.1f} MiB" if b >= MIB else f"{b / 1024:.0f} KiB"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=1, help="seeds 1..N per row (default 1: each run is 10-30 min)")
    ap.add_argument("--jobs", type=int, default=1, help="runs at a time (default 1)")
    ap.add_argument("--out", default=os.path.join(ROOT, "out/gpt3-placement"),
                    help="keep each run's results JSON in this directory (default out/gpt3-placement)")
    ap.add_argument("--resume", action="store_true",
                    help="keep the results already in --out (same binary and inputs assumed) and run only the missing")
    ap.add_argument("--from", dest="from_dir", help="print the table from the results kept in this directory")
    ap.add_argument("--binary", default=os.path.join(ROOT, "build/release/fabricsim"))
    a = ap.parse_args()
    seeds = range(1, a.seeds + 1)
    work = [(key, args, s) for _, _, key, args in ROWS for s in seeds]
    if a.from_dir:
        results = {(k, s): load(a.from_dir, k, s) for k, _, s in work}
    else:
        os.makedirs(a.out, exist_ok=True)
        with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
            # Longest first (adaptive and random-hosts ECMP take about 3x the rail-aligned run), so that
            # with --jobs 2 the short run fills in after one of them.
            kept = lambda k, s: a.resume and os.path.exists(os.path.join(a.out, f"{k}-seed{s}.json"))
            futures = {(k, s): pool.submit(run_one, a.binary, a.out, k, args, s, a.jobs)
                       for k, args, s in reversed(work) if not kept(k, s)}
            results = {ks: f.result() for ks, f in futures.items()}
        results.update({(k, s): load(a.out, k, s) for k, _, s in work if (k, s) not in results})
    fig = {ks: figures(r) for ks, r in results.items()}
    rows = {key: [fig[(key, s)] for s in seeds] for _, _, key, _ in ROWS}

    seeds_text = ("seed 1 only (each run is long)" if a.seeds == 1
                  else f"seeds 1 to {a.seeds}, mean ± standard deviation")
    fr = results[(ROWS[0][2], 1)]["figure_run"]
    jobs = fr.get("jobs", 1)
    how = f"{jobs} run{'s' if jobs > 1 else ''} at a time"
    if a.from_dir:
        how += f", printed from the results kept in {os.path.relpath(a.from_dir, ROOT)}"
    print(f"Generated by scripts/gpt3_placement_table.py{' --seeds %d' % a.seeds if a.seeds > 1 else ''} on "
          f"{fr.get('date', datetime.date.today())} ({fr.get('machine', figure_runs.machine())}); {seeds_text}; {how}.")
    print()
    dp = rows[ROWS[0][2]][0]
    print(f"| placement | routing | iteration | exposed comm | DP all-reduce {dp['dp_bytes'] / 1e6:.0f} MB: mean / max "
          f"| busbw | max queue | drops (packets) | wall |")
    print("|---|---|---|---|---|---|---|---|---|")
    base = statistics.mean(x["iteration"] for x in rows[ROWS[0][2]])
    for placement, routing, key, _ in ROWS:
        xs = rows[key]
        col = lambda k: [x[k] for x in xs]
        it = statistics.mean(col("iteration"))
        rel = "" if key == ROWS[0][2] else f" ({100 * (it / base - 1):+.1f}%)"
        print(f"| {placement} | {routing} | {cell(col('iteration'), '.3f', unit=' s')}{rel} | "
              f"{cell(col('exposed'), '.0f', 1e3, ' ms')} | {cell(col('dp_mean'), '.2f', 1e3)} / "
              f"{cell(col('dp_max'), '.2f', 1e3, ' ms')} | {cell(col('dp_busbw'), '.1f', unit=' GB/s')} | "
              f"{queue_cell(col('max_queue'))} | {cell(col('drops'), ',.0f')} | "
              f"{statistics.mean(col('wall')) / 60:.1f} min |")

    print()
    r0 = rows[ROWS[0][2]][0]
    para = (f"Compute is {r0['compute']:.3f} s per GPU. The compute-only critical path is {r0['critical']:.3f} s; "
            f"its extra {1e3 * r0['idle']:.0f} ms is the 1F1B bubble, {r0['stages'] - 1}/"
            f"{r0['stages'] + r0['microbatches'] - 1} of the pipeline. TP all-reduces of {r0['tp_bytes'] / MIB:.0f} MiB "
            f"over NVLink take {1e6 * r0['tp_mean']:.0f} us each ({r0['tp_busbw']:.0f} GB/s busbw), on the compute stream.")
    print(textwrap.fill(para, width=100))
    print()
    bullet = lambda text: print(textwrap.fill(text, width=100, initial_indent="- ", subsequent_indent="  ",
                                              break_on_hyphens=False))
    for placement, routing, key, _ in ROWS:
        xs = rows[key]
        each = lambda fmt, k, scale=1.0: ", ".join(f"{x[k] * scale:{fmt}}" for x in xs)
        tiers = sorted({x["queue_tier"] for x in xs})
        bullet(f"{placement}, {routing}, seed{'s 1 to %d' % a.seeds if a.seeds > 1 else ' 1'}: iteration "
               f"{each('.3f', 'iteration')} s; {each(',.0f', 'drops')} packets dropped; {each(',.1f', 'resent', 1 / MIB)} "
               f"MiB retransmitted; {each(',.0f', 'spine_bytes', 1e-9)} GB sent up to the spines; largest queue {', '.join(size(x['max_queue']) for x in xs)} (on "
               f"{' and '.join(tiers)} links); the slowest DP bucket {each('.2f', 'dp_max', 1e3)} ms; peak RSS "
               f"{max(x['rss'] for x in xs):.0f} MiB.")

if __name__ == "__main__":
    main()
