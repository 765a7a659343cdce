#!/usr/bin/env python3
"""Summarises the gpu/ harness's runs committed under validation/data/gpu-harness-*/ as markdown.

For each run folder and each compute-<layer>.json: the layer's GEMMs (forward + backward, bf16 and
fp8) in TFLOP/s and % of the datasheet peak, the SM clock range NVML read just after the GEMMs and
the clock-event reasons it gave, the HBM copy bandwidth, and the kernel launch latency; from
attention.json the fused attention and memory-bound kernels; from overlap.json the GEMM slowdown
while C CTAs are held; for the one-rank NCCL sweep its
out-of-place time range. Every figure is read from the JSON the harness
wrote; nothing is typed here.

usage: scripts/gpu_harness_table.py [--update docs/gpu-harness.md]
  With --update, replaces the text between the '<!-- gpu-harness-table -->' and
  '<!-- /gpu-harness-table -->' markers in that file (written to a temporary file, then renamed).
"""
import argparse
import glob
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN, END = "<!-- gpu-harness-table -->", "<!-- /gpu-harness-table -->"


def compute_rows(path):
    d = json.load(open(path))
    s = d["gemm_summary"]
    clocks = [g["gpu_state"]["sm_mhz"] for g in d["gemms"] if g.get("gpu_state")]
    reasons = sorted({r for g in d["gemms"] if g.get("gpu_state") for r in g["gpu_state"]["reasons"]})
    mem = {m["name"]: m for m in d.get("memory", [])}
    layer = os.path.basename(path)[len("compute-"):-len(".json")]

    def tf(dtype):
        t = s.get(dtype, {}).get("total")
        if not t:
            return "-"
        eff = t.get("efficiency")
        return f"{t['tflops']:.1f} ({100 * eff:.1f}%)" if eff is not None else f"{t['tflops']:.1f}"

    hbm = f"{mem['memcpy_d2d']['hbm_GBps']:.0f}" if "memcpy_d2d" in mem else "-"
    launch = d.get("launch")
    lat = f"{launch['async_us']:.2f} / {launch['sync_us']:.2f}" if launch else "-"
    clk = f"{min(clocks)}-{max(clocks)}" if clocks else "-"
    flush = "" if d["params"]["l2_flush"] else " (no L2 flush)"
    return d, f"| {layer}{flush} | {tf('bf16')} | {tf('fp8')} | {clk} | {', '.join(reasons) or '-'} | {hbm} | {lat} |"


def nccl_row(path):
    d = json.load(open(path))
    times = [r["out_of_place"]["time_us"] for r in d["results"] if r["out_of_place"]["time_us"] is not None]
    small = [r["out_of_place"]["time_us"] for r in d["results"] if r["size_bytes"] <= (8 << 20)]
    return (f"one-rank NCCL {d['op']} {d['results'][0]['size_bytes']} B to {d['results'][-1]['size_bytes']} B: "
            f"{min(small):.2f}-{max(small):.2f} us per call up to 8 MiB (launch and a local copy), "
            f"{max(times):.1f} us at the largest size")


def attention_rows(path, peak_tflops, peak_hbm):
    d = json.load(open(path))
    rows = ["Fused causal attention, bf16, one GPU's heads (gpu/torch/attention_bench.py, PyTorch "
            f"{d['system']['torch']}, cuDNN {d['system']['cudnn']}); TFLOP/s of the work the causal kernel does "
            "(half the full s x s product the simulator counts) and its % of the bf16 peak:",
            "",
            "| layer | backend | heads / kv | seq | forward us | fwd TFLOP/s (% peak) | fwd+bwd us | fwd+bwd TFLOP/s (% peak) |",
            "|---|---|---|---|---|---|---|---|"]
    for r in d["attention"]:
        if "error" in r:
            rows.append(f"| {r['layer']} | {r['backend']} | | | not run: {r['error']} | | | |")
            continue
        f = r["flops_forward_causal"]
        fw = f / r["forward_us"] / 1e6
        fb = 3 * f / r["forward_backward_us"] / 1e6
        rows.append(f"| {r['layer']} | {r['backend']} | {r['heads']} / {r['kv_heads']} | {r['seq_len']} | "
                    f"{r['forward_us']:.1f} | {fw:.0f} ({100 * fw / peak_tflops:.0f}%) | "
                    f"{r['forward_backward_us']:.1f} | {fb:.0f} ({100 * fb / peak_tflops:.0f}%) |")
    rows += ["", "Memory-bound kernels at the same token counts, GB/s of their minimum HBM traffic (% of the HBM peak):",
             "", "| layer | LayerNorm fwd+bwd | RMSNorm fwd+bwd | GeLU | SwiGLU |", "|---|---|---|---|---|"]
    by = {}
    for r in d["memory_bound"]:
        by.setdefault(r["layer"], {})[r["kernel"]] = r
    for layer, ks in by.items():
        cells = []
        for k in ("layernorm_fwd_bwd", "rmsnorm_fwd_bwd", "gelu_fwd", "swiglu_fwd"):
            r = ks.get(k)
            cells.append("-" if not r or "error" in r else f"{r['hbm_GBps']:.0f} ({100 * r['hbm_GBps'] / peak_hbm:.0f}%)")
        rows.append(f"| {layer} | " + " | ".join(cells) + " |")
    o = d.get("optimizer", {})
    if "hbm_GBps" in o:
        rows += ["", f"Fused Adam step, {o['parameters']:,} fp32 parameters: {o['time_us']:.0f} us, "
                 f"{o['hbm_GBps']:.0f} GB/s ({100 * o['hbm_GBps'] / peak_hbm:.0f}% of the HBM peak)."]
    return rows


def overlap_rows(path):
    d = json.load(open(path))
    ctas = sorted({o["ctas"] for g in d["gemms"] for o in g["overlap"]})
    rows = ["GEMM time while another stream holds C CTAs (gpu/torch/overlap_bench.py; one CTA per SM, "
            f"{d['system']['sm_count']} SMs): slowdown over the GEMM alone, `spin` CTAs (SMs lost) / "
            "`copy` CTAs (SMs lost and HBM traffic):",
            "",
            "| bf16 GEMM m x n x k | alone us (TFLOP/s) | " + " | ".join(f"C = {c}" for c in ctas) + " |",
            "|---|---|" + "---|" * len(ctas)]
    for g in d["gemms"]:
        cell = {}
        for o in g["overlap"]:
            cell.setdefault(o["ctas"], {})[o["kind"]] = o["slowdown"]
        rows.append(f"| {g['m']} x {g['n']} x {g['k']} | {g['alone_us']:.1f} ({g['alone_tflops']:.0f}) | " +
                    " | ".join(f"{cell[c]['spin']:.2f} / {cell[c]['copy']:.2f}" for c in ctas) + " |")
    rows += ["", "Copy CTAs alone: " + ", ".join(f"{r['ctas']} CTAs {r['hbm_GBps']:.0f} GB/s" for r in d["copy_alone"]) + "."]
    return rows


def table():
    out = []
    for run in sorted(glob.glob(os.path.join(ROOT, "validation/data/gpu-harness-*"))):
        files = sorted(glob.glob(os.path.join(run, "compute-*.json")))
        if not files:
            continue
        rows = [compute_rows(f) for f in files]
        d = rows[0][0]
        sysd = d["system"]
        tel = sysd.get("gpu_telemetry", {})
        out.append(f"**{d['device']}** (`{os.path.relpath(run, ROOT)}`, {sysd['timestamp']}; driver "
                   f"{sysd['nvidia_driver']}, CUDA {sysd['cuda_runtime_version']}; max SM clock "
                   f"{tel.get('max_sm_mhz', '-')} MHz, power limit {tel.get('power_limit_w', '-')} W; peaks "
                   f"{d['peaks']['source']}: bf16 {d['peaks']['bf16_tflops']} TFLOP/s, fp8 "
                   f"{d['peaks']['fp8_tflops']}, HBM {d['peaks']['hbm_GBps']} GB/s)")
        out.append("")
        out.append("| layer (tp 8) | bf16 GEMMs TFLOP/s (% peak) | fp8 | SM MHz after GEMMs | clock-event reasons | "
                   "HBM copy GB/s | launch us (async / sync) |")
        out.append("|---|---|---|---|---|---|---|")
        out += [r for _, r in rows]
        att = os.path.join(run, "attention.json")
        if os.path.exists(att):
            out.append("")
            out += attention_rows(att, d["peaks"]["bf16_tflops"], d["peaks"]["hbm_GBps"])
        ov = os.path.join(run, "overlap.json")
        if os.path.exists(ov):
            out.append("")
            out += overlap_rows(ov)
        nccl = os.path.join(run, "collectives-1rank.json")
        if os.path.exists(nccl):
            out.append("")
            out.append(nccl_row(nccl) + ".")
        out.append("")
    out.append(f"(scripts/gpu_harness_table.py, from the JSON files above)")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--update", help="markdown file whose marked section is replaced")
    a = ap.parse_args()
    t = table()
    if not a.update:
        print(t)
        return 0
    text = open(a.update).read()
    if BEGIN not in text or END not in text:
        print(f"{a.update}: no {BEGIN} ... {END} markers", file=sys.stderr)
        return 2
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    tmp = a.update + ".tmp"
    with open(tmp, "w") as f:
        f.write(head + BEGIN + "\n" + t + "\n" + END + tail)
    os.replace(tmp, a.update)
    return 0


if __name__ == "__main__":
    sys.exit(main())
