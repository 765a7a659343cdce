// The calibration file's keys (what `fabricsim calibrate` writes and `--calibration` / a
// workload's `calibration:` read), and the GPU and collective-tuning key groups it shares with
// workload files. Ranges of sizes in bytes, times in seconds, rates in bit/s.
#include "sim/config/Schema.h"
#include "sim/config/SchemaKeys.h"

namespace fabricsim {
namespace schemakeys {

std::vector<KeySpec> gpuFigureKeys(const std::string& at) {
  using K = KeyType;
  const std::string p = at + ".";
  std::vector<KeySpec> k{
      key(p + "peak", K::String, "989TFLOPS (h100-sxm)",
          "dense bf16 peak, a compute rate with a unit (989TFLOPS)", kNone, kNone, "FLOP/s"),
      key(p + "peak_fp8", K::String, "1979TFLOPS (h100-sxm)", "dense fp8 peak", kNone, kNone, "FLOP/s"),
      above(key(p + "hbm_bandwidth", K::Rate, "3.35TBps (h100-sxm)", "HBM bandwidth", 0, kNone, "bit/s")),
      above(key(p + "efficiency", K::Double, "gemm 0.6, attention 0.45",
                "one number for GEMMs and attention, or a map {gemm, attention, fp8_gemm, memory}", 0, 1)),
      above(key(p + "efficiency.gemm", K::Double, "0.6", "achieved share of peak in GEMMs", 0, 1)),
      above(key(p + "efficiency.attention", K::Double, "0.45", "achieved share of peak in fused attention", 0,
                1)),
      above(key(p + "efficiency.fp8_gemm", K::Double, "0.6", "achieved share of the fp8 peak in fp8 GEMMs", 0,
                1)),
      above(key(p + "efficiency.memory", K::Double, "1.0",
                "achieved share of HBM bandwidth in memory-bound kernels", 0, 1)),
      key(p + "comm_sm_share", K::Double, "0", "share of the SMs communication kernels take from compute", 0,
          0.95),
      key(p + "sms", K::Int, "132", "streaming multiprocessors", 2, 100000),
      above(key(p + "in_step_rate", K::Double, "1",
                "rate of kernels inside a training step relative to timed alone (fitted on step times)", 0,
                1)),
  };
  return k;
}

std::vector<KeySpec> collectiveTuningKeys(const std::string& at) {
  using K = KeyType;
  const std::string p = at + ".";
  return {
      key(p + "algorithm", K::String, "auto",
          "auto, ring, tree, hierarchical, nvls, nvls_tree, pat, or an NCCL_ALGO list for auto ('Ring,Tree', "
          "'^NVLS')"),
      key(p + "channels", K::Int, "4", "channels (rings or trees) across hosts", 1, 64),
      key(p + "call_channels", K::Int, "0 (NCCL's rule)", "channels of one call (0: NCCL's choice by size)", 0, 64),
      key(p + "nvlink_channels", K::Int, "1", "channels inside a host", 1, 64),
      key(p + "step_latency_nvlink", K::Time, "600ns", "latency of one algorithm step over NVLink", 0, kNone,
          "s"),
      key(p + "step_latency_network", K::Time, "2.7us", "latency of one algorithm step across the network", 0,
          kNone, "s"),
      above(key(p + "protocol_efficiency", K::Double, "1", "share of link bandwidth the protocol achieves", 0,
                1)),
      key(p + "chunk_size", K::Bytes, "1MiB", "bytes per pipelined chunk", 1, kNone, "bytes"),
      key(p + "traffic_class", K::Int, "0", "traffic class of the collective's packets", 0, 6),
      choice(p + "ring_model", {"auto", "steps", "pipelined"}, "auto", "how a ring is simulated"),
      key(p + "protocol", K::String, "simple",
          "simple, ll, ll128, auto (NCCL's tuner per call), or an NCCL_PROTO list for auto ('LL,Simple', '^LL128')"),
      above(key(p + "ll_latency_scale", K::Double, "0.6 / 3.4",
                "LL step latency relative to Simple's (NVLink)", 0, 10)),
      above(key(p + "ll128_latency_scale", K::Double, "1.9 / 3.4",
                "LL128 step latency relative to Simple's (NVLink)", 0, 10)),
      above(key(p + "ll_network_latency_scale", K::Double, "2.7 / 14",
                "LL step latency relative to Simple's (network)", 0, 10)),
      above(key(p + "ll128_network_latency_scale", K::Double, "4 / 14",
                "LL128 step latency relative to Simple's (network)", 0, 10)),
      above(key(p + "ll_max_bandwidth", K::Rate, "NCCL's: 141 / 39 / 20.4 GBps on 1 / 2 / more hosts", "LL's bandwidth cap per call", 0,
                kNone, "bit/s")),
      above(key(p + "ll128_channel_bandwidth", K::Rate, "36.7GBps", "LL128's bandwidth per channel", 0, kNone,
                "bit/s")),
      above(key(p + "simple_channel_bandwidth", K::Rate, "none (the links bound it)", "Simple's bandwidth per channel", 0, kNone,
                "bit/s")),
      key(p + "net_overhead", K::Time, "0", "per-message network overhead (proxy, NIC doorbell)", 0, kNone,
          "s"),
      key(p + "nvls", K::Bool, "false", "the host has NVLink SHARP (NVSwitch reduction)"),
      above(key(p + "nvls_efficiency", K::Double, "0.85", "share of NVLink bandwidth NVLS achieves", 0, 1)),
      key(p + "nvls_latency", K::Time, "25us", "NVLS base latency", 0, kNone, "s"),
      key(p + "nvls_pipeline", K::Bytes, "16MiB", "bytes NVLS keeps in flight", 1, kNone, "bytes"),
      above(key(p + "nvls_tree_efficiency", K::Double, "1", "share of bandwidth NVLS-Tree achieves", 0, 1)),
      key(p + "nvls_tree_hop_latency", K::Time, "step_latency_network", "NVLS-Tree latency per tree hop", 0,
          kNone, "s"),
  };
}

}  // namespace schemakeys

namespace {

using namespace schemakeys;

std::vector<KeySpec> calibrationKeys() {
  using K = KeyType;
  std::vector<KeySpec> k{key("gpu", K::Map, "", "the GPU's figures")};
  for (auto& g : gpuFigureKeys("gpu")) k.push_back(std::move(g));
  k.push_back(key("collectives", K::Map, "", "NCCL's collective tuning"));
  for (auto& c : collectiveTuningKeys("collectives")) k.push_back(std::move(c));
  k.push_back(key("fabric", K::Map, "", "fabric rates measured on the testbed (applied as --set)"));
  k.push_back(above(key("fabric.nvlink_bandwidth", K::Rate, "",
                        "per-GPU NVLink bandwidth (hosts.nvlink.bandwidth)", 0, kNone, "bit/s")));
  k.push_back(
      above(key("fabric.nic_bandwidth", K::Rate, "", "NIC rate (links.host_speed)", 0, kNone, "bit/s")));
  k.push_back(key("fit", K::Map, "", "what the fit reported (parameters, errors); not read"));
  k.push_back(key("source", K::String, "", "where the measurements came from"));
  return k;
}

}  // namespace

const Schema& calibrationSchema() {
  static const Schema s("calibration", calibrationKeys());
  return s;
}

}  // namespace fabricsim
