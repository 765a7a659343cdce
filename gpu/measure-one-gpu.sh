#!/usr/bin/env bash
# Measures what one GPU can: the compute benchmark (cuBLASLt GEMMs at the shipped workloads'
# layer shapes in bf16, fp16 and fp8; HBM copies; launch latency; the reduction kernel) with GPU
# clocks, power and clock-event reasons recorded through NVML, the GPT-3 175B layer twice (the
# second run is the run-to-run spread) and once without L2 flushes, and a one-rank NCCL all_reduce sweep with NCCL's INFO log
# (launch overhead and the tuner's log lines; one rank has no peer, so no bandwidth); where python3
# has PyTorch, fused attention and the memory-bound layer kernels at the same shapes
# (gpu/torch/attention_bench.py), and with CuPy too, the GEMM slowdown while a communication-like
# kernel holds some SMs (gpu/torch/overlap_bench.py).
#
# usage: gpu/measure-one-gpu.sh BIN_DIR OUT_DIR
#   BIN_DIR holds fabricsim-gpu-compute and fabricsim-gpu-collectives (a build's gpu/ folder).
# Writes OUT_DIR/system.txt (nvidia-smi before and after), compute-*.json / .txt, and
# collectives-1rank.{json,txt}. Each step runs even when an earlier one failed; the exit status
# is the number of failed steps; a step taking over STEP_TIMEOUT_S seconds (default 300) is stopped.
set -u
bin=${1:?usage: measure-one-gpu.sh BIN_DIR OUT_DIR}
out=${2:?usage: measure-one-gpu.sh BIN_DIR OUT_DIR}
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
failed=0
step() {  # step NAME COMMAND...: runs COMMAND, output to OUT_DIR/NAME.txt
  local name=$1; shift
  echo "== $name: $*" | tee -a "$out/steps.txt"
  timeout "${STEP_TIMEOUT_S:-300}" "$@" >"$out/$name.txt" 2>&1
  local rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "   failed (exit $rc)" | tee -a "$out/steps.txt"
    failed=$((failed + 1))
  fi
}
{
  date -u +%Y-%m-%dT%H:%M:%SZ
  uname -a
  nvidia-smi
  nvidia-smi -q -d CLOCK,POWER,PERFORMANCE,TEMPERATURE
} >"$out/system.txt" 2>&1

for w in gpt3-175b llama3-70b llama3-405b default-training; do
  step "compute-$w" "$bin/fabricsim-gpu-compute" --workload "$here/workloads/$w.yaml" --iters 50 \
    --json "$out/compute-$w.json"
done
step compute-gpt3-175b-repeat "$bin/fabricsim-gpu-compute" --workload "$here/workloads/gpt3-175b.yaml" \
  --iters 50 --skip-memory --json "$out/compute-gpt3-175b-repeat.json"
step compute-gpt3-175b-noflush "$bin/fabricsim-gpu-compute" --workload "$here/workloads/gpt3-175b.yaml" \
  --iters 50 --skip-memory --no-l2-flush --json "$out/compute-gpt3-175b-noflush.json"
# GEMMs timed after 2 s of back-to-back load each (the power-limited clock a training step runs
# at), at the GPT-3 recipe's TP 4 and at TP 8; not named compute-* so the attention step skips them.
for tp in 4 8; do
  step "sustained-gpt3-175b-tp$tp" "$bin/fabricsim-gpu-compute" --workload "$here/workloads/gpt3-175b.yaml" \
    --tp "$tp" --dtypes bf16,fp8 --sustain-ms 2000 --iters 50 --skip-memory \
    --json "$out/sustained-gpt3-175b-tp$tp.json"
done
if python3 -c 'import torch' 2>/dev/null; then
  step attention python3 "$here/gpu/torch/attention_bench.py" --json "$out/attention.json" "$out"/compute-*.json
  if python3 -c 'import cupy' 2>/dev/null; then
    step overlap python3 "$here/gpu/torch/overlap_bench.py" --json "$out/overlap.json"
  fi
fi
step collectives-1rank env NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING "$bin/fabricsim-gpu-collectives" \
  -C all_reduce -b 8 -e 1G -f 4 -d bfloat16 --json "$out/collectives-1rank.json"
nvidia-smi -q -d CLOCK,POWER,PERFORMANCE,TEMPERATURE >>"$out/system.txt" 2>&1
exit "$failed"
