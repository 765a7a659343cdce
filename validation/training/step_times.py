#!/usr/bin/env python3
"""Predicts published training step times and prints the error of each row.

Recipes: gpt3-175b.yaml, llama3.1-70b.yaml, llama3.1-405b.yaml (model names as NVIDIA's tables
spell them, e.g. gpt3_175b, llama3.1_70b, Llama3.1-405B).

Reads rows in the layout of validation/data/nvidia_dgxc_gpt3_175b_128gpu_step_times.csv
(model, precision, gpus, TP, PP, CP, VP, MBS, GBS, seq_len, step_time_s, ...), runs each
supported row's recipe workload (validation/training/<model>.yaml) with its data-parallel size
and global batch on an H100 NDR rail-optimized fabric sized for it (validation/cases/
h100-ndr-su32.yaml, one rail leaf per 32 hosts, up to 16), one iteration on the flow backend, and
prints a markdown table: published and predicted step time, error, and the step's split into
compute, pipeline bubble/idle and exposed communication. A row whose model has no recipe, or
whose parallelism the recipe cannot express, is printed as unsupported (and counts as a
failure in the summary).

Compute comes from the recipes' calibration (validation/reports/calibration-h100-step.yaml): the
kernel efficiencies validation/cases/run.sh fits on the gpu/ harness's H100 kernels, timed alone,
and gpu.in_step_rate, the fraction of that rate the tensor-core kernels keep inside a step, which
validation/training/fit_in_step_rate.py fits on the 128-GPU rows of shared/calibration. Those
rows are marked "fit" (their error is the fit's residual); every other row is a prediction.

usage: validation/training/step_times.py [--fabricsim BIN] [CSV ...]
       (default CSV: validation/data/nvidia_dgxc_gpt3_175b_128gpu_step_times.csv, a copy of
       shared/calibration's)
"""
import argparse
import csv
import datetime
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from figure_runs import machine  # noqa: E402  (the figure scripts' "N vCPU <model>")
def recipe_of(model):
    """The recipe workload of a published row's model name (gpt3_175b, llama3.1_70b, Llama3.1-405B, ...)."""
    key = "".join(ch for ch in model.lower() if ch.isalnum())
    if "gpt3" in key and "175b" in key:
        return "gpt3-175b.yaml"
    if "llama3" in key and key.endswith("405b"):
        return "llama3.1-405b.yaml"
    if "llama3" in key and key.endswith("70b"):
        return "llama3.1-70b.yaml"
    return None
TOPOLOGY = os.path.join(ROOT, "validation/cases/h100-ndr-su32.yaml")
HOSTS_PER_LEAF = 32
GPUS_PER_HOST = 8


CALIBRATION = os.path.join(ROOT, "validation/reports/calibration-h100-step.yaml")


def fitted_rows(path=CALIBRATION):
    """(model, precision, gpus) of the rows fit_in_step_rate.py fitted (its fit.in_step_rate.rows)."""
    if not os.path.exists(path):
        return set()
    with open(path) as f:
        text = f.read()
    return {(m, p, g) for m, p, g in re.findall(
        r"- \{model: ([^,]+), precision: ([^,]+), gpus: (\d+), published_s", text)}


def in_step_fit(path=CALIBRATION):
    """'value +- std_error (generated ...)' of the calibration's fitted gpu.in_step_rate, or None."""
    if not os.path.exists(path):
        return None
    with open(path) as f:
        text = f.read()
    m = re.search(r"^  in_step_rate:\n    value: (\S+)\n    std_error: (\S+)\n(?:.*\n)*?    generated: (.*)$", text, re.M)
    return f"{m.group(1)} +- {m.group(2)} (fitted {m.group(3)})" if m else None


def rows_of(path):
    with open(path) as f:
        lines = [l for l in f if not l.startswith("#")]
    return list(csv.DictReader(lines))


def run_row(binary, row, extra_sets=()):
    """The results job of one row, or a string saying why it is unsupported. `extra_sets` are more
    --workload-set KEY=VALUE overrides (fit_in_step_rate.py's gpu.in_step_rate)."""
    recipe = recipe_of(row["model"])
    if recipe is None:
        return "no recipe for this model"
    gpus, tp, pp = int(row["gpus"]), int(row["TP"]), int(row["PP"])
    cp, vp, mbs, gbs = int(row.get("CP") or 1), int(row.get("VP") or 1), int(row["MBS"]), int(row["GBS"])
    if gpus % (tp * pp * cp) != 0:
        return "gpus not a multiple of tp x pp x cp"
    dp = gpus // (tp * pp * cp)
    hosts = gpus // GPUS_PER_HOST
    # Rail leaves of 32 hosts, a power of two of them, their 32 uplinks spread over spines that
    # every rail shares (non-blocking): up to 8 leaves a rail (2048 GPUs) 4 spines per leaf of a
    # rail with 8 / leaves links each (spine ports stay at 64); 16 leaves (4096 GPUs) 32 spines
    # of 128 ports with one link per leaf (a SuperPOD of that size has a third tier; two tiers of
    # the same bisection stand for it). InfiniBand allows up to 254 ports a switch.
    leaves = 1
    while leaves * HOSTS_PER_LEAF < hosts:
        leaves *= 2
    if leaves > 16:
        return "more than 4096 GPUs: no testbed sized for it"
    spines, links = (4 * leaves, 8 // leaves) if leaves <= 8 else (32, 1)
    sets = [f"parallelism.tp={tp}", f"parallelism.pp={pp}", f"parallelism.cp={cp}", f"parallelism.dp={dp}",
            f"parallelism.micro_batch={mbs}", f"parallelism.global_batch={gbs}",
            f"parallelism.schedule={'interleaved' if vp > 1 else '1f1b'}", f"parallelism.virtual_stages={vp}",
            f"model.seq_len={row['seq_len']}",
            f"dtype={'fp8' if row['precision'].upper() == 'FP8' else 'bf16'}"]
    # The benchmarks behind the published rows run one userbuffers config for both precisions:
    # dgxc-benchmarking's GPT-3 175B hydra file (nemo_megatron/gpt3_175b_hydra.yaml, 35a9aec) is
    # the fp8 run's, and its Llama 3.1 configure.sh (143b90d) switches only fp8 and fp8_buf.
    sets += list(extra_sets)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.json")
        cmd = [binary, "run", TOPOLOGY, "--workload", os.path.join(HERE, recipe), "--backend", "flow", "-q",
               "--set", f"topology.rail.leaves={leaves}", "--set", f"topology.rail.spines={spines}",
               "--set", f"topology.rail.links_per_spine={links}", "--out", out]
        for s in sets:
            cmd += ["--workload-set", s]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            return "run failed: " + (p.stderr.strip().splitlines() or ["?"])[-1]
        with open(out) as f:
            return json.load(f)["jobs"][0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv", nargs="*", default=[os.path.join(
        ROOT, "validation", "data", "nvidia_dgxc_gpt3_175b_128gpu_step_times.csv")])
    ap.add_argument("--fabricsim", default=os.path.join(ROOT, "build/release/fabricsim"))
    a = ap.parse_args()
    given = [os.path.relpath(os.path.abspath(c), ROOT) for c in sys.argv[1:] if c in a.csv]
    print(f"Generated by {' '.join(['validation/training/step_times.py'] + given)} on {datetime.date.today()} "
          f"({machine()}); "
          "flow backend, one iteration per row.\n")
    rate = in_step_fit()
    if rate:
        print(f"Compute: {os.path.relpath(CALIBRATION, ROOT)}, gpu.in_step_rate {rate}.\n")
    print("| model | precision | GPUs | TP/PP/CP/VP | GBS | published (s) | predicted (s) | error | "
          "compute | bubble/idle | exposed comm |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    errors, fit_errors, failures = [], [], 0
    fitted = fitted_rows()
    by_recipe = {}  # (model, precision) -> [(gpus, published s, predicted s)] of the predicted rows
    for path in a.csv:
        for row in rows_of(path):
            job = run_row(a.fabricsim, row)
            shape = f"{row['TP']}/{row['PP']}/{row.get('CP') or 1}/{row.get('VP') or 1}"
            head = (f"| {row['model']} | {row['precision']} | {row['gpus']} | {shape} | {row['GBS']} | "
                    f"{float(row['step_time_s']):.3f} |")
            if isinstance(job, str):
                failures += 1
                print(f"{head} unsupported: {job} | | | | |")
                continue
            step = job["jct_s"]  # one iteration: the recipe workloads run iterations: 1
            err = (step / float(row["step_time_s"]) - 1) * 100
            fit = (row["model"], row["precision"], str(int(row["gpus"]))) in fitted
            if fit:
                fit_errors.append(abs(err))
            else:
                errors.append(abs(err))
                by_recipe.setdefault((row["model"], row["precision"]), []).append(
                    (int(row["gpus"]), float(row["step_time_s"]), step))
            print(f"{head} {step:.3f} | {err:+.1f}%{' (fit)' if fit else ''} | {job['compute_s']:.3f} s | "
                  f"{job['idle_s']:.3f} s | {job['exposed_comm_s']:.3f} s |")
    if fit_errors:
        print(f"\nfitted rows (gpu.in_step_rate): max |residual| {max(fit_errors):.1f}% over {len(fit_errors)} rows")
    if errors or failures:
        print(("\n" if not fit_errors else "") +
              (f"predicted rows: median |error| {statistics.median(errors):.1f}%, max {max(errors):.1f}% over "
               f"{len(errors)} rows" if errors else "predicted rows: none") +
              (f"; {failures} unsupported" if failures else ""))
    scaled = {k: sorted(v) for k, v in by_recipe.items() if len({g for g, _, _ in v}) > 1}
    if scaled:
        print("\nFrom the fewest to the most GPUs of each recipe (predicted rows):\n")
        print("| model | precision | GPUs | published step change | predicted step change | error |")
        print("|---|---|---|---|---|---|")
        for (model, precision), v in scaled.items():
            (g0, p0, s0), (g1, p1, s1) = v[0], v[-1]
            print(f"| {model} | {precision} | {g0:,} to {g1:,} | {(p1 / p0 - 1) * 100:+.1f}% | "
                  f"{(s1 / s0 - 1) * 100:+.1f}% | {(s0 / p0 - 1) * 100:+.1f}% to {(s1 / p1 - 1) * 100:+.1f}% |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
