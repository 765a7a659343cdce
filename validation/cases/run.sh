#!/usr/bin/env bash
# The validation scenario of docs/calibration.md: calibrate on the public single-node (NVIDIA
# DGX) and two-node (nccl-tests#309 reporter A) all-reduce tables, then validate on the tables
# the fit never saw (Azure ND H100 v5 single node; #309 reporter B, default and NCCL_ALGO=Ring).
# The fit starts from NCCL's own cost-model constants (h100-nccl-tuning.yaml). The calibration's
# gpu block (compute efficiencies, HBM rate, communication share, for validation/training/) is
# fitted on the gpu/ harness's H100 kernel measurements (validation/data/gpu-harness-2026-11-27-h100);
# with the default OUTDIR, validation/training/fit_in_step_rate.py then fits the rate those kernels
# keep inside a training step on the published 128-GPU step times and writes the recipes'
# calibration-h100-step.yaml.
# usage: validation/cases/run.sh [FABRICSIM] [OUTDIR]
set -euo pipefail
fabricsim="$(realpath "${1:-build/release/fabricsim}")"
cd "$(dirname "$0")/../.."   # paths in the reports are relative to the repository root
here=validation/cases
data=validation/data
harness=$data/gpu-harness-2026-11-27-h100
out="${2:-validation/reports}"
mkdir -p "$out"
t309="$data/nccltests_gh_nccl-tests-309_h100_ib_ndr_2nodes.yaml"
"$fabricsim" calibrate --topology "$here/h100-2node-ndr.yaml" --calibration "$here/h100-nccl-tuning.yaml" \
  --out "$out/calibration-h100.yaml" \
  --compute "$harness/compute-gpt3-175b.json" --attention "$harness/attention.json" --overlap "$harness/overlap.json" \
  "$data/nccltests_nvidia_dgxc_1node_8xH100_allreduce.csv" "$t309#A_2nodes_16gpus_default"
plot=()
python=python3; [ -x /usr/bin/python3 ] && python=/usr/bin/python3
if "$python" -c 'import matplotlib' 2>/dev/null; then plot=(--plot "$out/validation-h100.png"); fi
"$fabricsim" validate --calibration "$out/calibration-h100.yaml" --topology "$here/h100-2node-ndr.yaml" \
  --out "$out/validation-h100.json" --markdown "$out/validation-h100.md" "${plot[@]}" \
  "$data/nccltests_azure_ndh100v5_1node_allreduce_busbw.csv" \
  "$t309#B_2of8nodes_16gpus_default" "$t309#B_2nodes_16gpus_RING_MIN_CTAS24_QPS2"
if [ "$out" = validation/reports ]; then
  "$python" validation/training/fit_in_step_rate.py --fabricsim "$fabricsim" \
    --calibration "$out/calibration-h100.yaml" --out "$out/calibration-h100-step.yaml"
fi
