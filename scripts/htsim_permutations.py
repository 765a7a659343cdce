#!/usr/bin/env python3
"""The peer column of the README's Performance section: UEC htsim's RoCE simulator (`htsim_roce`)
on the fat-tree permutations that scripts/perf_permutations.py runs in fabricsim, with PFC on,
timed the same way (whole process, /usr/bin/time -v) and, when a fabricsim binary is given, run
alternately with fabricsim's matching row so that both see the same machine load.

htsim is not part of fabricsim and none of its code is: give this script a checkout of the public
UEC htsim repository (github.com/ultraethernet/uet-htsim; the README's figures used 40ccb05). It
builds `htsim_roce` there in a scratch folder outside the project (--build-dir), writes htsim's own
permutation matrix with the repository's generator (connection_matrices/gen_permutation.py:
every host sends one flow to a distinct other host, all starting at 0; seed 1), and runs

  htsim_roce -nodes N -tm MATRIX -strat ecmp_host -paths 1 -queue_type lossless_input -end END

whose defaults are the reference scenario's: 3-tier fat-tree of k^3/4 hosts, 100 Gb/s links,
1 us per hop, 4000-byte packets, PFC XOFF/XON at 15/12 packets (60/48 KB). htsim runs to END (us)
even after the last flow has finished, and its idle events cost time, so END is found first
(untimed runs from 1000 us, doubling until every flow reports "finished") and the timed runs use
the last flow's finish time plus 1 us; a timed run counts only if every flow finished. The matrix
differs from fabricsim's permutation (each simulator draws its own), so compare speeds, not flow
completion times.

Usage: scripts/htsim_permutations.py --htsim-src DIR [--k 8,16,32] [--runs N]
                                    [--build-dir DIR] [--fabricsim PATH]
"""
import argparse
import datetime
import os
import re
import statistics
import subprocess
import sys
import tempfile

import figure_runs

ROOT = figure_runs.ROOT
PFC = "switch.pfc={enabled: true, xoff: 60KB, xon: 48KB, classes: [0]}"
FLOW_BYTES = 2_000_000  # workloads/permutation-2mb.yaml: message_size 2MB (decimal)


def build(src, build_dir):
    sim = os.path.join(src, "htsim", "sim")
    if not os.path.isfile(os.path.join(sim, "CMakeLists.txt")):
        sys.exit(f"error: --htsim-src {src}: no htsim/sim/CMakeLists.txt there (expected a uet-htsim checkout)")
    subprocess.run(["cmake", "-S", sim, "-B", build_dir, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release"],
                   check=True, stdout=sys.stderr)
    subprocess.run(["cmake", "--build", build_dir, "--target", "htsim_roce"], check=True, stdout=sys.stderr)
    for root, _, files in os.walk(build_dir):
        if "htsim_roce" in files:
            return os.path.join(root, "htsim_roce")
    sys.exit(f"error: no htsim_roce under {build_dir} after the build")


def matrix(src, hosts, path):
    gen = os.path.join(src, "htsim", "sim", "datacenter", "connection_matrices", "gen_permutation.py")
    subprocess.run([sys.executable, gen, path, str(hosts), str(hosts), str(FLOW_BYTES), "0", "1"],
                   check=True, stdout=subprocess.DEVNULL)


FINISHED = re.compile(r"^Flow \S+ \d+ finished at ([\d.]+)", re.M)


def run_htsim(binary, hosts, tm, workdir, end_us):
    """(finish times of the flows that finished (us), wall s, peak RSS MiB) of one run to end_us."""
    cmd = ["/usr/bin/time", "-v", binary, "-nodes", str(hosts), "-tm", tm, "-strat", "ecmp_host", "-paths", "1",
           "-queue_type", "lossless_input", "-end", str(end_us), "-o", os.path.join(workdir, "logout.dat")]
    # htsim prints a line per PFC event: to a file, as one would run it, not through a pipe.
    out = os.path.join(workdir, "stdout.txt")
    with open(out, "w") as f:
        p = subprocess.run(cmd, stdout=f, stderr=subprocess.PIPE, text=True, cwd=workdir)
    if p.returncode != 0:
        sys.exit("failed: " + " ".join(cmd) + "\n" + p.stderr[-2000:])
    with open(out) as f:
        finished = [float(t) for t in FINISHED.findall(f.read())]
    return finished, *figure_runs.time_v(p.stderr)


def end_time(binary, hosts, tm, workdir):
    """The last flow's finish time plus 1 us, found by untimed runs to 1000, 2000, 4000 ... us."""
    end = 1000
    while True:
        finished, _, _ = run_htsim(binary, hosts, tm, workdir, end)
        if len(finished) == hosts:
            return int(max(finished)) + 1
        if end > 10_000_000:
            sys.exit(f"htsim_roce: {len(finished)} of {hosts} flows finished within {end} us")
        end *= 2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--htsim-src", required=True, help="a checkout of the UEC htsim repository")
    ap.add_argument("--k", default="8,16,32")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--build-dir", default=os.path.join(tempfile.gettempdir(), "fabricsim-htsim-build"))
    ap.add_argument("--fabricsim", default=os.path.join(ROOT, "build/release/fabricsim"),
                    help="the fabricsim binary to run alongside ('' for none)")
    a = ap.parse_args()
    src = os.path.abspath(a.htsim_src)
    rev = subprocess.run(["git", "-C", src, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    htsim_name = "uet-htsim " + (rev.stdout.strip() if rev.returncode == 0 else "(no git revision)")
    htsim = build(src, os.path.abspath(a.build_dir))
    command = " ".join(["scripts/htsim_permutations.py"] + sys.argv[1:])
    with_fs = bool(a.fabricsim)
    print(f"Generated by {command} on {datetime.date.today()} ({figure_runs.machine()}), {htsim_name}"
          + (f" against {figure_runs.version(a.fabricsim)}" if with_fs else "")
          + f"; median of {a.runs} runs, alternating; load average {os.getloadavg()[0]:.1f} at the start.\n")
    head = "| hosts (k) | htsim last flow finished, us | htsim_roce wall s | htsim_roce peak RSS MiB |"
    sep = "|---|---|---|---|"
    if with_fs:
        head += " fabricsim wall s | fabricsim peak RSS MiB | htsim / fabricsim wall | htsim / fabricsim RSS |"
        sep += "---|---|---|---|"
    print(head)
    print(sep)
    with tempfile.TemporaryDirectory() as work:
        for k in [int(x) for x in a.k.split(",")]:
            hosts = k ** 3 // 4
            tm = os.path.join(work, f"perm-{hosts}.cm")
            matrix(src, hosts, tm)
            end = end_time(htsim, hosts, tm, work)
            hw, hm, fw, fm = [], [], [], []
            for _ in range(a.runs):
                finished, w, m = run_htsim(htsim, hosts, tm, work, end)
                if len(finished) != hosts:
                    sys.exit(f"htsim_roce: {len(finished)} of {hosts} flows finished within {end} us")
                hw.append(w)
                hm.append(m)
                if with_fs:
                    _, w, m = figure_runs.run(a.fabricsim, f"topologies/fat-tree-k{k}-100g.yaml", ["--set", PFC])
                    fw.append(w)
                    fm.append(m)
            row = f"| {hosts:,} (k={k}) | {end - 1:,} | {statistics.median(hw):.2f} | {statistics.median(hm):.0f} |"
            if with_fs:
                row += (f" {statistics.median(fw):.2f} | {statistics.median(fm):.0f} | "
                        f"{statistics.median(hw) / statistics.median(fw):.1f} | "
                        f"{statistics.median(hm) / statistics.median(fm):.1f} |")
            print(row, flush=True)


if __name__ == "__main__":
    main()
