#include "gpu/common/ComputeOptions.h"

#include <boost/program_options.hpp>
#include <sstream>
#include <stdexcept>

#include "gpu/common/SizeSweep.h"

namespace fabricsim::gpu {
namespace po = boost::program_options;

ComputeOptions ComputeOptions::parse(int argc, const char* const* argv) {
  ComputeOptions o;
  std::string preset, workload, dtypes = "bf16,fp16,fp8", bytes = "1G";
  int hidden = 0, ffn = 0, heads = 0, kvHeads = 0, seq = 0, mbs = 0, tp = 0;
  bool gated = false, noAttention = false, noFlush = false;
  std::string presets;
  for (const auto& n : TransformerShape::presetNames()) presets += (presets.empty() ? "" : " | ") + n;
  po::options_description desc(
      "fabricsim-gpu-compute: cuBLAS GEMMs at a transformer layer's shapes, HBM copy bandwidth, kernel "
      "launch latency and reduction-kernel throughput\nOptions");
  desc.add_options()("help,h", "print this help")("preset", po::value(&preset),
                                                  ("model preset: " + presets).c_str())(
      "workload", po::value(&workload), "fabricsim training workload YAML (model and parallelism)")(
      "hidden", po::value(&hidden), "hidden size")("ffn", po::value(&ffn), "FFN size (default 4 x hidden)")(
      "heads", po::value(&heads), "attention heads")(
      "kv-heads", po::value(&kvHeads), "KV heads (default heads)")("seq", po::value(&seq), "sequence length")(
      "mbs", po::value(&mbs), "micro-batch (sequences)")("tp", po::value(&tp), "tensor-parallel degree")(
      "gated", po::bool_switch(&gated), "gated (SwiGLU) MLP")(
      "dtypes", po::value(&dtypes)->default_value(dtypes), "GEMM types, comma-separated: bf16, fp16, fp8")(
      "no-attention", po::bool_switch(&noAttention), "leave out the attention (QK^T, PV) GEMMs")(
      "warmup", po::value(&o.warmupIters)->default_value(o.warmupIters), "warm-up iterations")(
      "sustain-ms", po::value(&o.sustainMs)->default_value(o.sustainMs),
      "run each GEMM back to back this long before timing it (the power-limited clock)")(
      "iters", po::value(&o.iters)->default_value(o.iters), "timed iterations")(
      "bytes", po::value(&bytes)->default_value(bytes), "buffer size of the copy and reduction tests")(
      "launch-iters", po::value(&o.launchIters)->default_value(o.launchIters), "launches timed for latency")(
      "device", po::value(&o.device)->default_value(o.device), "CUDA device")(
      "peak-bf16-tflops", po::value(&o.peakOverride.bf16Tflops), "dense bf16 peak (TFLOP/s)")(
      "peak-fp16-tflops", po::value(&o.peakOverride.fp16Tflops), "dense fp16 peak (TFLOP/s)")(
      "peak-fp8-tflops", po::value(&o.peakOverride.fp8Tflops), "dense fp8 peak (TFLOP/s)")(
      "peak-hbm-GBps", po::value(&o.peakOverride.hbmGBps), "HBM bandwidth peak (GB/s)")(
      "no-l2-flush", po::bool_switch(&noFlush),
      "time back-to-back GEMM calls (default: evict the L2 before each)")(
      "skip-gemm", po::bool_switch(&o.skipGemm), "do not run the GEMMs")(
      "skip-memory", po::bool_switch(&o.skipMemory), "do not run the copy, launch and reduction tests")(
      "json,J", po::value(&o.jsonPath), "write the JSON document to this file");
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(desc).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw std::invalid_argument(e.what());
  }
  std::ostringstream help;
  help << desc;
  o.helpText = help.str();
  o.help = vm.count("help") > 0;

  if (!preset.empty() && !workload.empty())
    throw std::invalid_argument("give --preset or --workload, not both");
  if (!workload.empty()) {
    o.shape = TransformerShape::fromWorkloadFile(workload);
  } else if (!preset.empty()) {
    auto p = TransformerShape::preset(preset);
    if (!p) throw std::invalid_argument("--preset: unknown model '" + preset + "' (" + presets + ")");
    o.shape = *p;
  } else if (hidden == 0) {
    o.shape = *TransformerShape::preset("gpt3-175b");
    o.shape.tp = 8;
  }
  auto set = [&](const char* name, int value, int& field) {
    if (vm.count(name)) field = value;
  };
  set("hidden", hidden, o.shape.hidden);
  set("ffn", ffn, o.shape.ffnHidden);
  set("heads", heads, o.shape.heads);
  set("kv-heads", kvHeads, o.shape.kvHeads);
  set("seq", seq, o.shape.seqLen);
  set("mbs", mbs, o.shape.microBatch);
  set("tp", tp, o.shape.tp);
  if (gated) o.shape.gatedMlp = true;
  try {
    o.shape.finalize();
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("layer shape: ") + e.what());
  }

  o.gemmTypes.clear();
  std::stringstream ss(dtypes);
  for (std::string t; std::getline(ss, t, ',');) {
    if (t.empty()) continue;
    if (t != "bf16" && t != "fp16" && t != "fp8")
      throw std::invalid_argument("--dtypes: unknown GEMM type '" + t + "' (bf16, fp16, fp8)");
    o.gemmTypes.push_back(t);
  }
  o.attention = !noAttention;
  o.flushL2 = !noFlush;
  auto b = parseSize(bytes);
  if (!b || *b < 1024)
    throw std::invalid_argument("--bytes: expected a size of at least 1K, found '" + bytes + "'");
  o.memoryBytes = *b;
  if (o.iters < 1) throw std::invalid_argument("--iters must be >= 1");
  if (o.warmupIters < 0) throw std::invalid_argument("--warmup must be >= 0");
  if (!(o.sustainMs >= 0 && o.sustainMs <= 600000))
    throw std::invalid_argument("--sustain-ms must be in [0, 600000]");
  if (o.launchIters < 1) throw std::invalid_argument("--launch-iters must be >= 1");
  if (o.device < 0) throw std::invalid_argument("--device must be >= 0");
  for (double v : {o.peakOverride.bf16Tflops, o.peakOverride.fp16Tflops, o.peakOverride.fp8Tflops,
                   o.peakOverride.hbmGBps})
    if (v < 0) throw std::invalid_argument("peak rates must be >= 0");
  return o;
}

PeakRates ComputeOptions::peaksFor(const std::string& deviceName) const {
  PeakRates p = datasheetPeaks(deviceName).value_or(PeakRates{0, 0, 0, 0, "unknown"});
  bool overridden = false;
  auto apply = [&](double v, double& field) {
    if (v > 0) {
      field = v;
      overridden = true;
    }
  };
  apply(peakOverride.bf16Tflops, p.bf16Tflops);
  apply(peakOverride.fp16Tflops, p.fp16Tflops);
  apply(peakOverride.fp8Tflops, p.fp8Tflops);
  apply(peakOverride.hbmGBps, p.hbmGBps);
  if (overridden) p.source = p.source == "unknown" ? "command line" : p.source + " + command line";
  return p;
}

}  // namespace fabricsim::gpu
