#!/usr/bin/env python3
"""Plot the results of `fabricsim sweep`.

usage: scripts/plot_sweep.py DIR [--x AXIS] [--out PLOTDIR]

Reads DIR/summary.csv (and DIR/sweep.json for the axes, DIR/points/*/results.json for
nccl-tests tables) and writes PNGs into PLOTDIR (default DIR/plots):

  jct_vs_<x>.png            job completion time (the longest job) against the x axis
  exposed_comm_vs_<x>.png   exposed communication time against the x axis
  iteration_vs_<x>.png      iteration time, when the points ran training jobs
  busbw_vs_size.png         nccl-tests bus bandwidth against message size, one curve per point

x is --x, else the axis named `gpus`, else the first axis whose values are all numbers, else the
first axis (categories in file order). Each combination of the other axes' values (a "scheme")
is one line. A numeric x spanning more than 8x is drawn on a log2 scale.
Needs python3-matplotlib (Debian); uses the Agg backend, so no display is needed.
"""

import argparse
import csv
import json
import math
import os
import re
import sys


def import_pyplot():
    try:
        import matplotlib
    except ImportError:
        # A python3 from elsewhere (pyenv, venv) first on PATH: use Debian's, which has matplotlib.
        system = "/usr/bin/python3"
        if os.path.exists(system) and os.path.realpath(sys.executable) != os.path.realpath(system) \
                and not os.environ.get("PLOT_SWEEP_REEXEC"):
            os.environ["PLOT_SWEEP_REEXEC"] = "1"
            os.execv(system, [system] + sys.argv)
        sys.exit("error: plot_sweep.py needs matplotlib: apt-get install python3-matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def fail(msg, status=2):
    print("error: " + msg, file=sys.stderr)
    sys.exit(status)


def number(s):
    try:
        v = float(s)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def read_sweep(d):
    if not os.path.isdir(d):
        fail(f"{d}: no such sweep directory (the --out DIR of `fabricsim sweep`)")
    summary = os.path.join(d, "summary.csv")
    if not os.path.isfile(summary):
        fail(f"{summary} not found: run `fabricsim sweep SWEEP.yaml --out {d}` first "
             "(rank 0 writes summary.csv once every point has finished)")
    with open(summary, newline="") as f:
        rows = list(csv.DictReader(f))
        header = rows[0].keys() if rows else []
    axes, order = [], {}
    sweep_json = os.path.join(d, "sweep.json")
    if os.path.isfile(sweep_json):
        with open(sweep_json) as f:
            sweep = json.load(f)
        for a in sweep.get("axes", []):
            axes.append(a["name"])
            order[a["name"]] = [str(v.get("value")) for v in a.get("values", [])]
    else:  # the columns between `status` and the metrics
        cols = list(header)
        end = cols.index("backend") if "backend" in cols else len(cols)
        axes = cols[2:end]
    return rows, axes, order


def pick_x(rows, axes, wanted):
    if wanted:
        if wanted not in axes:
            fail(f"--x {wanted}: not an axis of this sweep; axes: {', '.join(axes) or '(none)'}")
        return wanted
    if "gpus" in axes:
        return "gpus"
    for a in axes:
        if rows and all(number(r[a]) is not None for r in rows):
            return a
    return axes[0] if axes else None


def scale_for(values):
    """(factor, unit) that makes seconds readable."""
    m = max(values) if values else 0
    if m < 1e-3:
        return 1e6, "us"
    if m < 1:
        return 1e3, "ms"
    return 1.0, "s"


def safe(name):
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


def plot_metric(plt, rows, axes, order, x, column, title, path):
    pts = [r for r in rows if number(r.get(column)) is not None]
    if not pts:
        return False
    others = [a for a in axes if a != x]
    numeric_x = x is not None and all(number(r[x]) is not None for r in pts)
    if x is None:
        cats = [r["point"] for r in pts]
    elif not numeric_x:
        seen = order.get(x, [])
        cats = [c for c in seen if any(r[x] == c for r in pts)]
        cats += sorted({r[x] for r in pts} - set(cats))
    factor, unit = scale_for([number(r[column]) for r in pts])
    schemes = {}
    for r in pts:
        key = ", ".join(f"{a}={r[a]}" for a in others) or "all"
        schemes.setdefault(key, []).append(r)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for key, rs in schemes.items():
        if x is None:
            xs = [cats.index(r["point"]) for r in rs]
        elif numeric_x:
            rs = sorted(rs, key=lambda r: number(r[x]))
            xs = [number(r[x]) for r in rs]
        else:
            rs = sorted(rs, key=lambda r: cats.index(r[x]))
            xs = [cats.index(r[x]) for r in rs]
        ax.plot(xs, [number(r[column]) * factor for r in rs], marker="o", label=key)
    if numeric_x:
        xs = [number(r[x]) for r in pts]
        if min(xs) > 0 and max(xs) / min(xs) > 8:
            ax.set_xscale("log", base=2)
    else:
        ax.set_xticks(range(len(cats)))
        ax.set_xticklabels(cats)
    ax.set_xlabel(x or "point")
    ax.set_ylabel(f"{title} ({unit})")
    ax.set_ylim(bottom=0)
    ax.set_title(f"{title} vs {x or 'point'}")
    ax.grid(True, alpha=0.3)
    if len(schemes) > 1 or others:
        ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def plot_busbw(plt, d, rows, axes, path):
    curves = []
    for r in rows:
        if r.get("status") != "ok":
            continue
        res = os.path.join(d, "points", r["point"], "results.json")
        try:
            with open(res) as f:
                doc = json.load(f)
        except (OSError, ValueError):
            continue
        for job in doc.get("jobs", []):
            nt = job.get("nccl_tests")
            if not nt or not nt.get("rows"):
                continue
            label = " ".join(f"{a}={r[a]}" for a in axes) or r["point"]
            if len(doc.get("jobs", [])) > 1:
                label += f" [{job.get('name', '')}]"
            sizes = [row["size_bytes"] for row in nt["rows"]]
            bw = [row["busbw_GBps"] for row in nt["rows"]]
            curves.append((f"{r['point']} {label}", sizes, bw, nt.get("op", "")))
    if not curves:
        return False
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label, sizes, bw, _ in curves:
        ax.plot(sizes, bw, marker="o", label=label)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("bus bandwidth (GB/s)")
    ops = sorted({c[3] for c in curves})
    ax.set_title("nccl-tests busbw" + (f" ({', '.join(ops)})" if ops else ""))
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="x-small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def main():
    ap = argparse.ArgumentParser(description="Plot the summary of a `fabricsim sweep` output directory.")
    ap.add_argument("dir", help="the sweep's --out directory (holds summary.csv)")
    ap.add_argument("--x", help="axis on the x axis (default: gpus, else the first numeric axis)")
    ap.add_argument("--out", help="directory for the PNGs (default DIR/plots)")
    args = ap.parse_args()
    rows, axes, order = read_sweep(args.dir)
    ok = [r for r in rows if r.get("status") == "ok"]
    if not ok:
        fail(f"{os.path.join(args.dir, 'summary.csv')}: no finished points to plot "
             f"({len(rows)} rows, none with status ok)", 1)
    x = pick_x(ok, axes, args.x)
    plt = import_pyplot()
    out = args.out or os.path.join(args.dir, "plots")
    os.makedirs(out, exist_ok=True)
    xname = safe(x or "point")
    written = []
    for column, title, stem in (("jct_s", "JCT", "jct"), ("exposed_comm_s", "exposed communication", "exposed_comm"),
                                ("iteration_s", "iteration time", "iteration")):
        path = os.path.join(out, f"{stem}_vs_{xname}.png")
        if plot_metric(plt, ok, axes, order, x, column, title, path):
            written.append(path)
    path = os.path.join(out, "busbw_vs_size.png")
    if plot_busbw(plt, args.dir, ok, axes, path):
        written.append(path)
    for p in written:
        print(p)


if __name__ == "__main__":
    main()
