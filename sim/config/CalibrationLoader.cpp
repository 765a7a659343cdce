#include "sim/config/CalibrationLoader.h"

#include <cstdio>

#include "sim/config/GpuPresets.h"
#include "sim/config/TopologyLoader.h"
#include "sim/config/WorkloadLoader.h"

namespace fabricsim {

/// `key` of `node`: a choice and the set auto may pick from, by `parse` (a scalar's text ->
/// optional (choice, allowed bits)); otherwise an error naming what was `expected`.
template <class Choice, class Parse>
void readSetting(YamlReader& r, const YAML::Node& node, const std::string& path, const char* key, Parse parse,
                 const std::string& expected, Choice& choice, uint8_t& allowed) {
  if (!YamlReader::has(node, key)) return;
  const YAML::Node v = node[key];
  const auto got = v.IsScalar() ? parse(v.Scalar()) : std::nullopt;
  if (!got) {
    r.error(v, YamlReader::join(path, key), "expected " + expected + ", found " + YamlReader::describe(v));
    return;
  }
  choice = got->first;
  allowed = got->second;
}

void readCollectiveTuning(YamlReader& r, const YAML::Node& node, const std::string& path,
                          CollectiveTuning& tuning) {
  if (!r.expectMap(node, path)) return;
  r.checkKeys(node, path);
  // One algorithm (direct is for all-to-all and send/recv only), auto, or an NCCL_ALGO list.
  readSetting(r, node, path, "algorithm",
              [](const std::string& t) {
                auto got = parseAlgorithmSetting(t);
                return got && got->first == CollectiveAlgorithm::Direct ? std::nullopt : got;
              },
              "auto, ring, tree, hierarchical, nvls, nvls_tree, pat, or an NCCL_ALGO list for auto to choose from "
              "such as 'Ring,Tree' or '^NVLS,NVLSTree'",
              tuning.algorithm, tuning.algorithmsAllowed);
  r.read(node, path, "channels", tuning.channels);
  r.read(node, path, "call_channels", tuning.callChannels);
  r.read(node, path, "nvlink_channels", tuning.nvlinkChannels);
  r.read(node, path, "step_latency_nvlink", tuning.stepLatencyNvlink);
  r.read(node, path, "step_latency_network", tuning.stepLatencyNetwork);
  r.read(node, path, "protocol_efficiency", tuning.protocolEfficiency);
  r.read(node, path, "chunk_size", tuning.chunkSize);
  r.read(node, path, "traffic_class", tuning.trafficClass);
  std::string ringModel;
  if (r.read(node, path, "ring_model", ringModel))
    tuning.ringModel = ringModel == "steps"       ? RingModel::Steps
                       : ringModel == "pipelined" ? RingModel::Pipelined
                                                  : RingModel::Auto;
  // One protocol, auto, or an NCCL_PROTO list for auto to choose from.
  readSetting(r, node, path, "protocol", parseProtocolSetting,
              "auto, ll, ll128, simple, or an NCCL_PROTO list for auto to choose from such as 'LL,Simple' or "
              "'^LL128'",
              tuning.protocol, tuning.protocolsAllowed);
  r.read(node, path, "ll_latency_scale", tuning.llLatencyScale);
  r.read(node, path, "ll128_latency_scale", tuning.ll128LatencyScale);
  r.read(node, path, "ll_network_latency_scale", tuning.llNetworkLatencyScale);
  r.read(node, path, "ll128_network_latency_scale", tuning.ll128NetworkLatencyScale);
  for (const auto& [key, out] : {std::pair<const char*, double*>{"ll_max_bandwidth", &tuning.llMaxBandwidthGBps},
                                 {"ll128_channel_bandwidth", &tuning.ll128ChannelBandwidthGBps},
                                 {"simple_channel_bandwidth", &tuning.simpleChannelBandwidthGBps}}) {
    BitRate rate;
    if (r.read(node, path, key, rate)) *out = static_cast<double>(rate.bitsPerSecond()) / 8 / 1e9;
  }
  r.read(node, path, "net_overhead", tuning.netOverhead);
  r.read(node, path, "nvls", tuning.nvls);
  r.read(node, path, "nvls_efficiency", tuning.nvlsEfficiency);
  r.read(node, path, "nvls_tree_efficiency", tuning.nvlsTreeEfficiency);
  r.read(node, path, "nvls_latency", tuning.nvlsLatency);
  r.read(node, path, "nvls_tree_hop_latency", tuning.nvlsTreeHopLatency);
  r.read(node, path, "nvls_pipeline", tuning.nvlsPipeline);
}

namespace {

void readFlops(YamlReader& r, const YAML::Node& node, const std::string& path, const char* key, double& out) {
  if (!YamlReader::has(node, key)) return;
  const YAML::Node v = node[key];
  const std::string p = YamlReader::join(path, key);
  if (!v.IsScalar()) {
    r.error(v, p, "expected a compute rate with a unit, e.g. '989TFLOPS', found " + YamlReader::describe(v));
    return;
  }
  const Parsed<double> f = parseFlops(v.Scalar());
  if (f.value)
    out = *f.value;
  else
    r.error(v, p, f.error);
}

}  // namespace

void readGpuFigures(YamlReader& r, const YAML::Node& node, const std::string& path, GpuSpec& gpu) {
  readFlops(r, node, path, "peak", gpu.peakFlops);
  readFlops(r, node, path, "peak_fp8", gpu.peakFp8Flops);
  r.read(node, path, "comm_sm_share", gpu.commSmShare);
  r.read(node, path, "sms", gpu.sms);
  r.read(node, path, "in_step_rate", gpu.inStepRate);
  BitRate hbm;
  if (r.read(node, path, "hbm_bandwidth", hbm))
    gpu.hbmBytesPerSecond = static_cast<double>(hbm.bitsPerSecond()) / 8;
  if (YamlReader::has(node, "efficiency")) {
    const YAML::Node e = node["efficiency"];
    const std::string p = YamlReader::join(path, "efficiency");
    if (e.IsMap()) {
      r.checkKeys(e, p);
      r.read(e, p, "gemm", gpu.gemmEfficiency);
      r.read(e, p, "attention", gpu.attentionEfficiency);
      r.read(e, p, "fp8_gemm", gpu.fp8GemmEfficiency);
      r.read(e, p, "memory", gpu.memoryEfficiency);
    } else if (e.IsScalar()) {
      double x = 0;
      if (r.read(node, path, "efficiency", x)) gpu.gemmEfficiency = gpu.attentionEfficiency = x;
    } else {
      r.error(e, p,
              "expected a number in (0, 1] or a map {gemm, attention, fp8_gemm, memory}, found " +
                  YamlReader::describe(e));
    }
  }
}

void readFabricCalibration(YamlReader& r, const YAML::Node& node, std::vector<std::string>& sets) {
  if (!r.expectMap(node, "fabric")) return;
  r.checkKeys(node, "fabric");
  BitRate rate;
  if (r.read(node, "fabric", "nvlink_bandwidth", rate))
    sets.push_back("hosts.nvlink.bandwidth=" + node["nvlink_bandwidth"].Scalar());
  if (r.read(node, "fabric", "nic_bandwidth", rate))
    sets.push_back("links.host_speed=" + node["nic_bandwidth"].Scalar());
}

std::vector<std::string> calibrationTopologySets(const std::string& path) {
  const std::string text = readInputFile(path);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(path, e.mark.is_null() ? 0 : e.mark.line + 1, e.mark.is_null() ? 0 : e.mark.column + 1,
                     "", "invalid YAML: " + e.msg);
  }
  // The whole file is checked as `run` would check it, then its fabric block is read.
  GpuSpec gpu;
  CollectiveTuning tuning;
  applyCalibrationYaml(text, path, gpu, tuning);
  YamlReader r(path);
  r.useSchema(calibrationSchema(), root);
  std::vector<std::string> sets;
  if (root.IsMap() && YamlReader::has(root, "fabric")) readFabricCalibration(r, root["fabric"], sets);
  r.throwIfErrors();
  return sets;
}

void applyCalibrationFile(const std::string& path, GpuSpec& gpu, CollectiveTuning& tuning) {
  applyCalibrationYaml(readInputFile(path), path, gpu, tuning);
}

void applyCalibrationYaml(const std::string& yamlText, const std::string& file, GpuSpec& gpu,
                          CollectiveTuning& tuning) {
  YAML::Node root;
  try {
    root = YAML::Load(yamlText);
  } catch (const YAML::Exception& e) {
    throw InputError(file, e.mark.is_null() ? 0 : e.mark.line + 1, e.mark.is_null() ? 0 : e.mark.column + 1,
                     "", "invalid YAML: " + e.msg);
  }
  YamlReader r(file);
  r.useSchema(calibrationSchema(), root);
  if (!root.IsMap()) {
    r.error(root, "",
            "expected a map of calibration keys (gpu, collectives, fabric, fit, source), found " +
                YamlReader::describe(root));
    r.throwIfErrors();
  }
  r.checkKeys(root, "");
  GpuSpec g = gpu;
  CollectiveTuning t = tuning;
  if (YamlReader::has(root, "gpu")) {
    const YAML::Node n = root["gpu"];
    if (r.expectMap(n, "gpu")) {
      r.checkKeys(n, "gpu");
      readGpuFigures(r, n, "gpu", g);
    }
  }
  if (YamlReader::has(root, "collectives")) readCollectiveTuning(r, root["collectives"], "collectives", t);
  if (YamlReader::has(root, "fabric")) {
    std::vector<std::string> sets;
    readFabricCalibration(r, root["fabric"], sets);
  }
  if (YamlReader::has(root, "fit")) r.expectMap(root["fit"], "fit");
  std::string source;
  r.read(root, "", "source", source);
  r.throwIfErrors();
  gpu = g;
  tuning = t;
}

}  // namespace fabricsim
