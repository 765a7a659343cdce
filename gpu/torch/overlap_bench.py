#!/usr/bin/env python3
"""fabricsim-gpu-overlap: how much a GEMM slows down while a communication kernel holds some SMs.

Models: NCCL runs a collective as one kernel of C CTAs (one per channel) that stays resident for
the whole call; a GEMM overlapped with it (Megatron's overlapped gradient reduce-scatter, TP
communication overlap) runs on the SMs left. This times, on one GPU, bf16 GEMMs (cuBLAS through
PyTorch) alone and while another stream holds C CTAs of one of two stand-ins for that kernel:
`spin` (each CTA holds an SM and waits: the SM loss alone) and `copy` (each CTA copies through
HBM with 16-byte loads: SM loss plus HBM contention, an upper bound for a network collective
whose HBM traffic is the NIC's rate, tens of GB/s). Each CTA asks for enough shared memory that
no GEMM CTA can share its SM. Also the HBM bandwidth C copy CTAs reach alone (a channel's local
copy rate). The GEMM slowdown is the overlapped time over the lone time; with NVML
(nvidia-ml-py), the SM clock, power, temperature and clock-event reasons after each measurement.
Leaves out: the NVLink and NIC traffic of a real collective, NCCL's own kernels (this machine has
one GPU), GEMMs that use fewer SMs than the GPU has.
Units: microseconds, TFLOP/s, GB/s.

usage: overlap_bench.py --json OUT.json [--ctas 8,16,32] [--shapes MxNxK,...]
"""
import argparse
import sys
import time

import cupy as cp
import torch

from bench_common import Telemetry, write_json

# 2: gpu_state as bench_common.Telemetry samples it (the 2026-11-27 runs are schema 1: sm_mhz,
# power_w, sw_power_cap, reasons_bits).
TOOL, SCHEMA = "fabricsim-gpu-overlap", 2
SRC = r'''
extern "C" __global__ void spin(unsigned long long cycles) {
  extern __shared__ char smem[];
  if (threadIdx.x == 0) smem[0] = 0;
  const unsigned long long start = clock64();
  while (clock64() - start < cycles) { }
}
extern "C" __global__ void copy(const int4* __restrict__ a, int4* __restrict__ b, unsigned long long n, int reps) {
  extern __shared__ char smem[];
  if (threadIdx.x == 0) smem[0] = 0;
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  for (int r = 0; r < reps; ++r)
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
      b[i] = a[i];
}
'''
THREADS = 512


def main():
    ap = argparse.ArgumentParser(description="GEMM slowdown while a communication-like kernel holds C CTAs")
    ap.add_argument("--json", required=True)
    ap.add_argument("--ctas", default="8,16,24,32")
    ap.add_argument("--shapes", default="8192x8192x8192,2048x6144x12288,2048x12288x6144,8192x4096x8192")
    ap.add_argument("--iters", type=int, default=20)
    a = ap.parse_args()
    tel = Telemetry(0)
    props = torch.cuda.get_device_properties(0)
    spin, copyk = cp.RawKernel(SRC, "spin"), cp.RawKernel(SRC, "copy")
    smem = 160 * 1024  # > half of the 228 KB an H100 SM has: one such CTA per SM, and no GEMM CTA beside it
    for k in (spin, copyk):
        k.max_dynamic_shared_size_bytes = smem
    side = torch.cuda.Stream()
    side_cp = cp.cuda.ExternalStream(side.cuda_stream)  # Stream.from_external in newer CuPy
    main_s = torch.cuda.current_stream()
    nbytes = 1 << 30
    src = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    n16 = nbytes // 16

    def ev():
        return torch.cuda.Event(enable_timing=True)

    def copy_alone(ctas, reps=4):
        s, e = ev(), ev()
        s.record(side)
        with side_cp:
            copyk((ctas,), (THREADS,), (src.data_ptr(), dst.data_ptr(), cp.uint64(n16), cp.int32(reps)),
                  shared_mem=smem)
        e.record(side)
        e.synchronize()
        return s.elapsed_time(e) * 1e3, 2.0 * nbytes * reps  # us, HBM bytes (read + write)

    doc = {"tool": TOOL, "schema": SCHEMA, "device": props.name,
           "system": {"timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "torch": torch.__version__,
                      "cupy": cp.__version__, "sm_count": props.multi_processor_count,
                      "threads_per_cta": THREADS, "shared_bytes_per_cta": smem},
           "copy_alone": [], "gemms": []}
    ctas = [int(c) for c in a.ctas.split(",")]
    copy_alone(8, 1)  # warm-up (module load)
    per_rep_us = {}
    for c in ctas + [props.multi_processor_count]:
        us, b = copy_alone(c)
        per_rep_us[c] = us / 4
        doc["copy_alone"].append({"ctas": c, "time_us": us, "hbm_GBps": b / us / 1e3, "gpu_state": tel.sample()})
        print(f"copy alone, {c:3d} CTAs: {b / us / 1e3:7.0f} GB/s")
    for shp in a.shapes.split(","):
        m, n, k = (int(x) for x in shp.split("x"))
        A = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        B = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        flops = 2.0 * m * n * k

        def gemm_loop():
            s, e = ev(), ev()
            s.record(main_s)
            for _ in range(a.iters):
                torch.matmul(A, B)
            e.record(main_s)
            return s, e

        for _ in range(5):
            torch.matmul(A, B)
        s, e = gemm_loop()
        e.synchronize()
        alone = s.elapsed_time(e) * 1e3 / a.iters
        rec = {"m": m, "n": n, "k": k, "flops": flops, "alone_us": alone, "alone_tflops": flops / alone / 1e6,
               "gpu_state_alone": tel.sample(), "overlap": []}
        loop_us = alone * a.iters
        for c in ctas:
            for kind in ("spin", "copy"):
                torch.cuda.synchronize()
                with side_cp:
                    if kind == "spin":
                        cycles = int(3 * loop_us * 2.0e3)  # 3 loops at up to 2 GHz
                        spin((c,), (THREADS,), (cp.uint64(cycles),), shared_mem=smem)
                    else:
                        reps = max(1, int(3 * loop_us / per_rep_us[c]))
                        copyk((c,), (THREADS,), (src.data_ptr(), dst.data_ptr(), cp.uint64(n16), cp.int32(reps)),
                              shared_mem=smem)
                s, e = gemm_loop()
                e.synchronize()
                t = s.elapsed_time(e) * 1e3 / a.iters
                side.synchronize()
                rec["overlap"].append({"ctas": c, "kind": kind, "gemm_us": t, "slowdown": t / alone,
                                       "gpu_state": tel.sample()})
                print(f"{m}x{n}x{k}: alone {alone:8.1f} us ({flops / alone / 1e6:5.0f} TFLOP/s); with {c:2d} {kind} "
                      f"CTAs {t:8.1f} us, x{t / alone:.3f}")
        doc["gemms"].append(rec)
        del A, B
    write_json(a.json, doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
