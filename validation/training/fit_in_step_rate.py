#!/usr/bin/env python3
"""Fits gpu.in_step_rate on published step times and writes the recipes' calibration.

The gpu/ harness times each kernel alone on an idle GPU (validation/reports/calibration-h100.yaml,
fitted by validation/cases/run.sh). Inside a training step the same kernels run on a GPU that
has been at its power limit for seconds, beside communication kernels: gpu.in_step_rate is the
fraction of the isolated tensor-core rate (GEMMs, fp8 or not, and fused attention) they keep
there. It is one dimensionless physical quantity, bounded by (0, 1] (a kernel is not faster in
a step than alone); the harness itself saw the SM clock of a power-capped H100 between 1560 and
1980 MHz (validation/data/gpu-harness-2026-11-27-h100), a ratio of 0.79-1 from the clock alone.

The fit: least squares on ln(predicted / published step time) over the rows given (by default
the two 128-GPU GPT-3 175B rows of shared/calibration, BF16 and FP8, copied in validation/data),
each row predicted by validation/training/step_times.py's run (flow backend, one iteration)
with --workload-set gpu.in_step_rate=r; golden-section search on [0.5, 1]. With one parameter
and two rows the fit leaves one degree of freedom: the residuals say whether one rate explains
both precisions. Its standard error is s / sqrt(sum J^2), J = d ln(step) / d r at the solution.

Writes --out (default validation/reports/calibration-h100-step.yaml, which the recipes in
validation/training/ read): the harness calibration with gpu.in_step_rate added and the fit
recorded under fit.in_step_rate. Nothing is written if a row fails.

usage: validation/training/fit_in_step_rate.py [--fabricsim BIN] [--calibration IN] [--out OUT] [CSV ...]
"""
import argparse
import concurrent.futures
import datetime
import math
import os
import re
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from step_times import ROOT, machine, rows_of, run_row  # noqa: E402

LOW, HIGH = 0.5, 1.0   # search interval; the physical bound is (0, 1]
TOLERANCE = 1e-3       # on r: 0.1% of the compute, far under the step rows' 3-digit rounding


def with_rate(base_text, rate, provenance):
    """The calibration text `base_text` with gpu.in_step_rate = rate and `provenance` (YAML lines
    indented under fit:) appended to its fit block."""
    lines = base_text.splitlines()
    out, in_gpu, placed = [], False, False
    for line in lines:
        if line.startswith("gpu:"):
            in_gpu = True
            out.append(line)
            continue
        if in_gpu and not line.startswith(" ") and not placed:
            out.append(f"  in_step_rate: {rate:.4f}")
            placed, in_gpu = True, False
        if line.strip().startswith("in_step_rate:"):
            continue
        out.append(line)
    if not placed:
        out.append(f"  in_step_rate: {rate:.4f}")
    text = "\n".join(out) + "\n"
    text = re.sub(r"^source: (.*)$", lambda m: "source: " + m.group(1) +
                  "; gpu.in_step_rate fitted by validation/training/fit_in_step_rate.py on published step times",
                  text, count=1, flags=re.M)
    if provenance:
        if re.search(r"^fit:\s*$", text, flags=re.M):
            # appended at the end of the file: the fit block is the file's last top-level key
            text += provenance
        else:
            text += "fit:\n" + provenance
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv", nargs="*", default=[os.path.join(
        ROOT, "validation", "data", "nvidia_dgxc_gpt3_175b_128gpu_step_times.csv")])
    ap.add_argument("--fabricsim", default=os.path.join(ROOT, "build/release/fabricsim"))
    ap.add_argument("--calibration", default=os.path.join(ROOT, "validation/reports/calibration-h100.yaml"))
    ap.add_argument("--out", default=os.path.join(ROOT, "validation/reports/calibration-h100-step.yaml"))
    a = ap.parse_args()
    rows = [r for path in a.csv for r in rows_of(path)]
    if not rows:
        sys.exit("no rows to fit")
    with open(a.calibration) as f:
        base = f.read()
    # The recipes read --out: give it the harness calibration first (rate 1, no provenance),
    # so every run below differs from the harness only by the --workload-set rate.
    write_atomically(a.out, with_rate(base, 1.0, ""))

    cache = {}

    def steps(rate):
        key = round(rate, 6)
        if key not in cache:
            with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
                jobs = list(pool.map(lambda r: run_row(a.fabricsim, r, [f"gpu.in_step_rate={rate:.6f}"]), rows))
            for row, job in zip(rows, jobs):
                if isinstance(job, str):
                    sys.exit(f"{row['model']} {row['precision']} {row['gpus']} GPUs: {job}")
            cache[key] = [job["jct_s"] for job in jobs]
            print(f"  r = {rate:.4f}: " + ", ".join(f"{s:.3f} s" for s in cache[key]), file=sys.stderr)
        return cache[key]

    def cost(rate):
        return sum(math.log(s / float(r["step_time_s"])) ** 2 for s, r in zip(steps(rate), rows))

    # Golden-section search for the minimum of the summed squared log errors.
    g = (math.sqrt(5) - 1) / 2
    lo, hi = LOW, HIGH
    x1, x2 = hi - g * (hi - lo), lo + g * (hi - lo)
    f1, f2 = cost(x1), cost(x2)
    while hi - lo > TOLERANCE:
        if f1 <= f2:
            hi, x2, f2 = x2, x1, f1
            x1 = hi - g * (hi - lo)
            f1 = cost(x1)
        else:
            lo, x1, f1 = x1, x2, f2
            x2 = lo + g * (hi - lo)
            f2 = cost(x2)
    rate = round((lo + hi) / 2, 4)
    at = steps(rate)
    resid = [math.log(s / float(r["step_time_s"])) for s, r in zip(at, rows)]
    # Standard error from the local slope (central difference of +-0.01).
    up, down = steps(rate + 0.01), steps(rate - 0.01)
    jac = [(math.log(u) - math.log(d)) / 0.02 for u, d in zip(up, down)]
    dof = len(rows) - 1
    std = (math.sqrt(sum(e * e for e in resid) / dof) / math.sqrt(sum(j * j for j in jac))) if dof > 0 else None
    on_bound = rate <= LOW + TOLERANCE or rate >= HIGH - TOLERANCE

    prov = [f"  in_step_rate:",
            f"    value: {rate:.4f}",
            f"    std_error: {std:.4f}" if std is not None else "    std_error: null",
            f"    on_search_bound: {'true' if on_bound else 'false'}",
            f"    model: ln(predicted/published step time) least squares, golden section on [{LOW}, {HIGH}], "
            f"validation/training/step_times.py runs (flow backend, one iteration)",
            f"    generated: {datetime.date.today()} ({machine()})",
            f"    rows:"]
    for r, s, e in zip(rows, at, resid):
        prov.append(f"      - {{model: {r['model']}, precision: {r['precision']}, gpus: {r['gpus']}, "
                    f"published_s: {float(r['step_time_s'])}, predicted_s: {s:.4f}, "
                    f"error_pct: {(math.exp(e) - 1) * 100:.2f}}}")
    write_atomically(a.out, with_rate(base, rate, "\n".join(prov) + "\n"))
    print(f"gpu.in_step_rate = {rate:.4f}" + (f" +- {std:.4f}" if std is not None else "") +
          (" (on the search bound)" if on_bound else "") + f"; written to {os.path.relpath(a.out, ROOT)}")
    for r, s, e in zip(rows, at, resid):
        print(f"  {r['model']} {r['precision']} {r['gpus']} GPUs: published {float(r['step_time_s']):.3f} s, "
              f"fitted {s:.3f} s ({(math.exp(e) - 1) * 100:+.1f}%)")
    return 0


def write_atomically(path, text):
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".fit-", suffix=".yaml")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


if __name__ == "__main__":
    sys.exit(main())
