#include "sim/calibrate/CalibrationWriter.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "sim/config/WorkloadLoader.h"

namespace fabricsim {
namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

double round4(double v) {
  return std::round(v * 1e4) / 1e4;
}

}  // namespace

std::string CalibrationWriter::yaml(const CalibrationFit::Result& fit,
                                    const std::vector<std::string>& sources, const std::string& testbed,
                                    const std::string& backend, int64_t minSizeBytes,
                                    const std::optional<ComputeFit::Result>& compute,
                                    const std::vector<CalibrationFit::HeldOut>& crossValidation) {
  const ModelParameters& p = fit.parameters;
  auto isFitted = [&](size_t i) {
    return std::find(fit.fitted.begin(), fit.fitted.end(), ModelParameters::names()[i]) != fit.fitted.end();
  };
  YAML::Emitter out;
  out.SetDoublePrecision(10);  // the rounded figures as written (0.0822, not 0.082199999999999995)
  out << YAML::BeginMap;
  std::string src = "fabricsim calibrate on";
  for (const auto& s : sources) src += " " + s;
  src += "; testbed " + testbed;
  out << YAML::Key << "source" << YAML::Value << src;
  {
    // Both rates, fitted or held (the testbed's, or a starting calibration's), so that the file
    // alone gives the model the fit used. Gbps with three decimals: the loader's rates are whole
    // bits per second.
    out << YAML::Key << "fabric" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "nvlink_bandwidth" << YAML::Value << fmt("%.3fGbps", p.nvlinkBandwidthGBps * 8);
    out << YAML::Key << "nic_bandwidth" << YAML::Value << fmt("%.3fGbps", p.nicBandwidthGBps * 8);
    out << YAML::EndMap;
  }
  // The collectives block: the fitted figures, and every setting of the fit's tuning that
  // differs from the defaults (e.g. channels, protocol, nvls from the starting calibration), so
  // that the file alone reproduces the fitted model.
  const CollectiveTuning& t = fit.tuning;
  const CollectiveTuning d;
  using P = ModelParameters;
  const bool anyTuning =
      isFitted(P::kStepLatencyNvlink) || isFitted(P::kStepLatencyNetwork) || isFitted(P::kNvlsEfficiency) ||
      isFitted(P::kNvlsLatency) || t.algorithm != d.algorithm || t.algorithmsAllowed != d.algorithmsAllowed ||
      t.channels != d.channels ||
      t.callChannels != d.callChannels ||
      t.nvlinkChannels != d.nvlinkChannels || t.protocol != d.protocol || t.protocolsAllowed != d.protocolsAllowed ||
      t.protocolEfficiency != d.protocolEfficiency || t.llLatencyScale != d.llLatencyScale ||
      t.ll128LatencyScale != d.ll128LatencyScale || t.llNetworkLatencyScale != d.llNetworkLatencyScale ||
      t.ll128NetworkLatencyScale != d.ll128NetworkLatencyScale || t.llMaxBandwidthGBps != d.llMaxBandwidthGBps ||
      t.simpleChannelBandwidthGBps != d.simpleChannelBandwidthGBps ||
      t.ll128ChannelBandwidthGBps != d.ll128ChannelBandwidthGBps || t.netOverhead != d.netOverhead || t.nvls != d.nvls || t.nvlsPipeline != d.nvlsPipeline ||
      t.nvlsTreeEfficiency != d.nvlsTreeEfficiency || t.stepLatencyNvlink != d.stepLatencyNvlink ||
      t.stepLatencyNetwork != d.stepLatencyNetwork || t.nvlsEfficiency != d.nvlsEfficiency ||
      t.nvlsLatency != d.nvlsLatency || isFitted(P::kNvlsTreeHop) ||
      t.nvlsTreeHopLatency != d.nvlsTreeHopLatency || t.ringModel != d.ringModel;
  if (anyTuning) {
    out << YAML::Key << "collectives" << YAML::Value << YAML::BeginMap;
    if (t.algorithm == CollectiveAlgorithm::Auto && t.algorithmsAllowed != d.algorithmsAllowed)
      out << YAML::Key << "algorithm" << YAML::Value << ncclAlgoList(t.algorithmsAllowed);
    else if (t.algorithm != d.algorithm)
      out << YAML::Key << "algorithm" << YAML::Value << toString(t.algorithm);
    if (t.channels != d.channels) out << YAML::Key << "channels" << YAML::Value << t.channels;
    if (t.callChannels != d.callChannels) out << YAML::Key << "call_channels" << YAML::Value << t.callChannels;
    if (t.nvlinkChannels != d.nvlinkChannels)
      out << YAML::Key << "nvlink_channels" << YAML::Value << t.nvlinkChannels;
    if (t.protocol == CollectiveProtocol::Auto && t.protocolsAllowed != d.protocolsAllowed)
      out << YAML::Key << "protocol" << YAML::Value << ncclProtoList(t.protocolsAllowed);
    else if (t.protocol != d.protocol)
      out << YAML::Key << "protocol" << YAML::Value << toString(t.protocol);
    if (t.ringModel != d.ringModel)
      out << YAML::Key << "ring_model" << YAML::Value
          << (t.ringModel == RingModel::Steps ? "steps" : t.ringModel == RingModel::Pipelined ? "pipelined" : "auto");
    if (t.protocolEfficiency != d.protocolEfficiency)
      out << YAML::Key << "protocol_efficiency" << YAML::Value << t.protocolEfficiency;
    if (t.llLatencyScale != d.llLatencyScale)
      out << YAML::Key << "ll_latency_scale" << YAML::Value << t.llLatencyScale;
    if (t.ll128LatencyScale != d.ll128LatencyScale)
      out << YAML::Key << "ll128_latency_scale" << YAML::Value << t.ll128LatencyScale;
    if (t.llNetworkLatencyScale != d.llNetworkLatencyScale)
      out << YAML::Key << "ll_network_latency_scale" << YAML::Value << t.llNetworkLatencyScale;
    if (t.ll128NetworkLatencyScale != d.ll128NetworkLatencyScale)
      out << YAML::Key << "ll128_network_latency_scale" << YAML::Value << t.ll128NetworkLatencyScale;
    if (t.llMaxBandwidthGBps != d.llMaxBandwidthGBps)
      out << YAML::Key << "ll_max_bandwidth" << YAML::Value << fmt("%.3fGBps", t.llMaxBandwidthGBps);
    if (t.ll128ChannelBandwidthGBps != d.ll128ChannelBandwidthGBps)
      out << YAML::Key << "ll128_channel_bandwidth" << YAML::Value << fmt("%.3fGBps", t.ll128ChannelBandwidthGBps);
    if (t.simpleChannelBandwidthGBps != d.simpleChannelBandwidthGBps)
      out << YAML::Key << "simple_channel_bandwidth" << YAML::Value << fmt("%.3fGBps", t.simpleChannelBandwidthGBps);
    if (t.netOverhead != d.netOverhead)
      out << YAML::Key << "net_overhead" << YAML::Value << fmt("%.1fns", t.netOverhead.micros() * 1e3);
    if (isFitted(P::kStepLatencyNvlink) || t.stepLatencyNvlink != d.stepLatencyNvlink)
      out << YAML::Key << "step_latency_nvlink" << YAML::Value
          << fmt("%.1fns", t.stepLatencyNvlink.micros() * 1e3);
    if (isFitted(P::kStepLatencyNetwork) || t.stepLatencyNetwork != d.stepLatencyNetwork)
      out << YAML::Key << "step_latency_network" << YAML::Value
          << fmt("%.1fns", t.stepLatencyNetwork.micros() * 1e3);
    if (t.nvls != d.nvls) out << YAML::Key << "nvls" << YAML::Value << t.nvls;
    if (isFitted(P::kNvlsEfficiency) || t.nvlsEfficiency != d.nvlsEfficiency)
      out << YAML::Key << "nvls_efficiency" << YAML::Value << fmt("%.4f", t.nvlsEfficiency);
    if (isFitted(P::kNvlsTreeEfficiency) || t.nvlsTreeEfficiency != d.nvlsTreeEfficiency)
      out << YAML::Key << "nvls_tree_efficiency" << YAML::Value << fmt("%.4f", t.nvlsTreeEfficiency);
    if (isFitted(P::kNvlsTreeHop) || t.nvlsTreeHopLatency != d.nvlsTreeHopLatency)
      out << YAML::Key << "nvls_tree_hop_latency" << YAML::Value
          << fmt("%.1fns", t.nvlsTreeHop().micros() * 1e3);
    if (isFitted(P::kNvlsLatency) || t.nvlsLatency != d.nvlsLatency)
      out << YAML::Key << "nvls_latency" << YAML::Value << fmt("%.1fns", t.nvlsLatency.micros() * 1e3);
    if (isFitted(P::kNvlsPipeline) || t.nvlsPipeline != d.nvlsPipeline)
      out << YAML::Key << "nvls_pipeline" << YAML::Value
          << fmt("%.0fKiB", std::round(static_cast<double>(t.nvlsPipeline) / 1024));
    out << YAML::EndMap;
  }
  if (compute && (compute->gemmEfficiency || compute->hbmBytesPerSecond)) {
    out << YAML::Key << "gpu" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "peak" << YAML::Value << fmt("%.1fTFLOPS", compute->peakFlops / 1e12);
    if (compute->peakFp8Flops > 0 && compute->fp8GemmEfficiency)
      out << YAML::Key << "peak_fp8" << YAML::Value << fmt("%.1fTFLOPS", compute->peakFp8Flops / 1e12);
    // The attention efficiency only from fused attention (KernelFit): the compute result's
    // attention products are unfused (ComputeFit::Result).
    if (compute->gemmEfficiency || compute->fp8GemmEfficiency || compute->attentionEfficiency ||
        compute->memoryEfficiency) {
      out << YAML::Key << "efficiency" << YAML::Value << YAML::Flow << YAML::BeginMap;
      auto put = [&](const char* key, const std::optional<double>& v) {
        if (v) out << YAML::Key << key << YAML::Value << round4(std::min(1.0, *v));
      };
      put("gemm", compute->gemmEfficiency);
      if (compute->peakFp8Flops > 0) put("fp8_gemm", compute->fp8GemmEfficiency);
      put("attention", compute->attentionEfficiency);
      put("memory", compute->memoryEfficiency);
      out << YAML::EndMap;
    }
    if (compute->hbmBytesPerSecond)
      out << YAML::Key << "hbm_bandwidth" << YAML::Value
          << fmt("%.1fGBps", *compute->hbmBytesPerSecond / 1e9);
    if (compute->commSmShare)
      out << YAML::Key << "comm_sm_share" << YAML::Value << round4(std::min(0.95, *compute->commSmShare));
    out << YAML::EndMap;
  }
  out << YAML::Key << "fit" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "model" << YAML::Value
      << "ln(simulated/measured time) least squares within physical bounds, Levenberg-Marquardt (Ceres), "
         "simulator in the loop; std_error from the covariance s^2 (J^T J)^-1";
  out << YAML::Key << "backend" << YAML::Value << backend;
  out << YAML::Key << "min_size_bytes" << YAML::Value << minSizeBytes;
  out << YAML::Key << "points" << YAML::Value << fit.points.size();
  out << YAML::Key << "rms_log_time" << YAML::Value << round4(fit.rmsLogTime);
  out << YAML::Key << "rms_error_pct" << YAML::Value << round4(fit.rmsErrorPct);
  out << YAML::Key << "max_abs_error_pct" << YAML::Value << round4(fit.maxAbsErrorPct);
  out << YAML::Key << "iterations" << YAML::Value << fit.iterations;
  out << YAML::Key << "converged" << YAML::Value << fit.converged;
  out << YAML::Key << "parameters" << YAML::Value << YAML::BeginMap;
  for (size_t i = 0; i < ModelParameters::names().size(); ++i) {
    out << YAML::Key << ModelParameters::names()[i] << YAML::Value << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "value" << YAML::Value << round4(p.get(i));
    out << YAML::Key << "fitted" << YAML::Value << isFitted(i);
    const auto at = std::find(fit.fitted.begin(), fit.fitted.end(), ModelParameters::names()[i]);
    if (at != fit.fitted.end() && !fit.standardErrors.empty())
      out << YAML::Key << "std_error" << YAML::Value
          << round4(fit.standardErrors[static_cast<size_t>(at - fit.fitted.begin())]);
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
  if (!crossValidation.empty()) {
    // Leave one table out: the fit on the others, its busbw error on the one left out.
    out << YAML::Key << "cross_validation" << YAML::Value << YAML::BeginSeq;
    for (const auto& h : crossValidation) {
      out << YAML::Flow << YAML::BeginMap;
      out << YAML::Key << "left_out" << YAML::Value << h.measurement;
      out << YAML::Key << "points" << YAML::Value << h.points;
      out << YAML::Key << "median_abs_error_pct" << YAML::Value << round4(h.medianAbsErrorPct);
      out << YAML::Key << "max_abs_error_pct" << YAML::Value << round4(h.maxAbsErrorPct);
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  if (compute) {
    out << YAML::Key << "compute" << YAML::Value << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "gemms" << YAML::Value << compute->gemms;
    out << YAML::Key << "rms_log_time" << YAML::Value << round4(compute->rmsLogTime) << YAML::EndMap;
  }
  out << YAML::Key << "residuals" << YAML::Value << YAML::BeginSeq;
  for (const auto& q : fit.points) {
    out << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "measurement" << YAML::Value << q.measurement;
    out << YAML::Key << "size_bytes" << YAML::Value << q.sizeBytes;
    out << YAML::Key << "measured_us" << YAML::Value << round4(q.measuredUs);
    out << YAML::Key << "fitted_us" << YAML::Value << round4(q.fittedUs);
    out << YAML::Key << "error_pct" << YAML::Value << round4(q.errorPct);
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
  out << YAML::EndMap << YAML::EndMap;
  return std::string("# fabricsim calibration (fabricsim calibrate); see docs/calibration.md\n") +
         out.c_str() + "\n";
}

}  // namespace fabricsim
