#!/usr/bin/env python3
"""fabricsim-gpu-attention: fused attention and the memory-bound kernels of a transformer layer,
timed with PyTorch on one GPU, at the layer shapes the compute benchmark (fabricsim-gpu-compute)
recorded.

Models: per layer shape (from the `shape` key of fabricsim-gpu-compute JSON files: hidden, heads,
kv heads, sequence length, micro-batch, tp) and per scaled-dot-product-attention backend that runs
(FlashAttention-2 as PyTorch ships it, cuDNN's fused attention), causal and bf16: the forward time
and the forward + backward time of one GPU's share of the heads (heads / tp, kv heads / tp at
least 1), each the mean of CUDA-event-timed calls after warm-up. FLOPs are given as the simulator
counts them (4 b s^2 d_head h forward, the full s x s product; backward 2x forward) and as the
causal kernels execute them (half of that). Also the layer's memory-bound kernels at the same
token count: LayerNorm and RMSNorm forward + backward, GeLU, SwiGLU (silu(a) * b), the fused Adam
step over 100 M fp32 parameters; for each the time and the bandwidth of its minimum HBM traffic.
With nvidia-ml-py, the SM clock, power and clock-event reasons just after each timed loop.
Leaves out: L2 flushing (attention's working set at these sizes exceeds L2), dropout, variable
sequence lengths, FP8 attention.
Units: microseconds, TFLOP/s (1e12), GB/s (1e9 B/s).

usage: attention_bench.py --json OUT.json COMPUTE.json [COMPUTE.json ...]
"""
import argparse
import json
import sys
import time

import torch
import torch.nn.functional as F

from bench_common import Telemetry, write_json

TOOL, SCHEMA = "fabricsim-gpu-attention", 1


def timed(fn, warmup, iters):
    for _ in range(warmup):
        fn()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(iters):
        fn()
    stop.record()
    stop.synchronize()
    return start.elapsed_time(stop) * 1e3 / iters  # us


def backends():
    from torch.nn.attention import SDPBackend
    return [("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)]


def attention(shape, tel, warmup, iters):
    from torch.nn.attention import sdpa_kernel
    tp = shape["tp"]
    h = shape["heads"] // tp
    kv = max(1, shape["kv_heads"] // tp)
    d = shape["hidden"] // shape["heads"]
    s, b = shape["seq_len"], shape["micro_batch"]
    out = []
    for name, be in backends():
        rec = {"layer": shape["name"], "backend": name, "batch": b, "heads": h, "kv_heads": kv, "seq_len": s,
               "head_dim": d, "causal": True, "dtype": "bf16",
               "flops_forward": 4.0 * b * s * s * d * h, "flops_forward_causal": 2.0 * b * s * s * d * h}
        try:
            q = torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
            k = torch.randn(b, kv, s, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
            v = torch.randn(b, kv, s, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
            g = torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16)
            gqa = kv != h

            def fwd():
                return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa)

            def fwd_bwd():
                o = fwd()
                o.backward(g)

            def run():
                with sdpa_kernel([be]):
                    with torch.no_grad():
                        rec["forward_us"] = timed(fwd, warmup, iters)
                    rec["forward_backward_us"] = timed(fwd_bwd, warmup, iters)

            try:
                run()
            except RuntimeError:
                if not gqa:
                    raise
                # A backend without grouped-query support: the kv heads repeated to h (as Megatron
                # does before such kernels); the extra K/V traffic is small next to the s^2 work.
                k = k.detach().repeat_interleave(h // kv, dim=1).requires_grad_()
                v = v.detach().repeat_interleave(h // kv, dim=1).requires_grad_()
                gqa = False
                rec["kv_expanded"] = True
                run()
            rec["gpu_state"] = tel.sample()
            rec["backward_us"] = rec["forward_backward_us"] - rec["forward_us"]
            rec["tflops_forward"] = rec["flops_forward"] / rec["forward_us"] / 1e6
            rec["tflops_forward_backward"] = 3 * rec["flops_forward"] / rec["forward_backward_us"] / 1e6
        except Exception as e:  # a backend this build or GPU lacks
            rec["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        out.append(rec)
        torch.cuda.empty_cache()
    return out


def memory_bound(shape, tel, warmup, iters):
    tokens = shape["seq_len"] * shape["micro_batch"]
    hid, ffn = shape["hidden"], shape["ffn_hidden"] // shape["tp"]
    bf = torch.bfloat16
    out = []

    def add(name, fn, bytes_moved):
        rec = {"layer": shape["name"], "kernel": name, "tokens": tokens, "min_hbm_bytes": bytes_moved}
        try:
            rec["time_us"] = timed(fn, warmup, iters)
            rec["hbm_GBps"] = bytes_moved / rec["time_us"] / 1e3
            rec["gpu_state"] = tel.sample()
        except Exception as e:
            rec["error"] = f"{type(e).__name__}: {e}"
        out.append(rec)

    x = torch.randn(tokens, hid, device="cuda", dtype=bf, requires_grad=True)
    gx = torch.randn(tokens, hid, device="cuda", dtype=bf)
    ln = torch.nn.LayerNorm(hid, device="cuda", dtype=bf)
    rms = torch.nn.RMSNorm(hid, device="cuda", dtype=bf)
    e = 2 * tokens * hid  # bytes of one bf16 activation
    # forward reads x, writes y; backward reads x and dy, writes dx (statistics recomputed or tiny)
    add("layernorm_fwd_bwd", lambda: ln(x).backward(gx), 5 * e)
    add("rmsnorm_fwd_bwd", lambda: rms(x).backward(gx), 5 * e)
    a = torch.randn(tokens, ffn, device="cuda", dtype=bf)
    c = torch.randn(tokens, ffn, device="cuda", dtype=bf)
    f = 2 * tokens * ffn
    add("gelu_fwd", lambda: F.gelu(a, approximate="tanh"), 2 * f)
    add("swiglu_fwd", lambda: F.silu(a) * c, 3 * f)  # reads a and c, writes the product
    return out


def adam(tel, warmup, iters, params=100_000_000):
    p = torch.nn.Parameter(torch.zeros(params, device="cuda", dtype=torch.float32))
    p.grad = torch.randn_like(p)
    opt = torch.optim.Adam([p], lr=1e-4, fused=True)
    # reads param, grad, m, v; writes param, m, v: 7 x 4 bytes per parameter
    rec = {"kernel": "adam_fused_fp32", "parameters": params, "min_hbm_bytes": 28 * params}
    rec["time_us"] = timed(opt.step, warmup, iters)
    rec["hbm_GBps"] = rec["min_hbm_bytes"] / rec["time_us"] / 1e3
    rec["gpu_state"] = tel.sample()
    return rec


def main():
    ap = argparse.ArgumentParser(description="fused attention and memory-bound kernels at the compute benchmark's shapes")
    ap.add_argument("compute_json", nargs="+", help="fabricsim-gpu-compute JSON files (their `shape` key)")
    ap.add_argument("--json", required=True, help="output file")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--iters", type=int, default=20)
    a = ap.parse_args()
    shapes, seen = [], set()
    for path in a.compute_json:
        sh = json.load(open(path))["shape"]
        key = json.dumps(sh, sort_keys=True)
        if key not in seen:
            seen.add(key)
            shapes.append(sh)
    tel = Telemetry(torch.cuda.current_device())
    props = torch.cuda.get_device_properties(0)
    doc = {"tool": TOOL, "schema": SCHEMA, "device": props.name,
           "system": {"timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                      "torch": torch.__version__, "cuda": torch.version.cuda,
                      "cudnn": torch.backends.cudnn.version(), "sm_count": props.multi_processor_count,
                      "at_start": tel.sample()},
           "params": {"warmup_iters": a.warmup, "iters": a.iters},
           "attention": [], "memory_bound": []}
    for sh in shapes:
        doc["attention"] += attention(sh, tel, a.warmup, a.iters)
        doc["memory_bound"] += memory_bound(sh, tel, a.warmup, a.iters)
    try:
        doc["optimizer"] = adam(tel, a.warmup, a.iters)
    except Exception as e:
        doc["optimizer"] = {"error": f"{type(e).__name__}: {e}"}
    for r in doc["attention"]:
        if "error" in r:
            print(f"{r['layer']:>18} {r['backend']:>6}  not run: {r['error']}")
        else:
            print(f"{r['layer']:>18} {r['backend']:>6} h {r['heads']:3d} kv {r['kv_heads']:2d} s {r['seq_len']:5d}"
                  f" fwd {r['forward_us']:9.1f} us {r['tflops_forward']:6.1f} TFLOP/s"
                  f"  fwd+bwd {r['forward_backward_us']:9.1f} us {r['tflops_forward_backward']:6.1f} TFLOP/s"
                  f" (full s^2 count)")
    for r in doc["memory_bound"] + [doc["optimizer"]]:
        if "error" not in r:
            print(f"{r.get('layer', ''):>18} {r['kernel']:>20} {r['time_us']:9.1f} us {r['hbm_GBps']:7.0f} GB/s")
    write_json(a.json, doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
