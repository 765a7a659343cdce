#!/usr/bin/env python3
"""Plot a `fabricsim validate` report: measured vs simulated busbw against size, one panel per
measurement (measured as points, simulated as a line), with the per-measurement median error.

usage: scripts/plot_validation.py REPORT.json OUT.png
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[1]) as f:
        report = json.load(f)
    names = [m["measurement"] for m in report["measurements"]]
    if not names:
        print("plot_validation: the report has no measurements", file=sys.stderr)
        return 1
    cols = min(3, len(names))
    rows = (len(names) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(5.5 * cols, 4 * rows), squeeze=False)
    for ax, m in zip(axes.flat, report["measurements"]):
        pts = [p for p in report["points"] if p["measurement"] == m["measurement"]]
        x = [p["size_bytes"] for p in pts]
        ax.plot(x, [p["measured_busbw_GBps"] for p in pts], "o", ms=4, label="measured")
        ax.plot(x, [p["simulated_busbw_GBps"] for p in pts], "-", label="simulated")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("size (bytes)")
        ax.set_ylabel("busbw (GB/s)")
        title = m["measurement"].split("/")[-1]
        ax.set_title(f"{title}\n{m['op']}, {m['ranks']} ranks, median |err| {m['median_abs_error_pct']:.1f}%",
                     fontsize=8)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    for ax in list(axes.flat)[len(names):]:
        ax.axis("off")
    s = report["summary"]
    fig.suptitle(f"fabricsim validate: median |error| {s['median_abs_error_pct']:.1f}%, "
                 f"max {s['max_abs_error_pct']:.1f}% over {s['points']} points >= {s['min_size_bytes']} B")
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
