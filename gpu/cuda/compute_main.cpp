// fabricsim-gpu-compute: cuBLASLt GEMMs at one transformer layer's shapes (forward and backward),
// HBM copy bandwidth, kernel launch latency and reduction-kernel throughput on one GPU; prints a
// table and optionally writes the JSON document (ComputeReport).
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>

#include "gpu/common/ComputeOptions.h"
#include "gpu/common/ComputeReport.h"
#include "gpu/common/GpuTelemetry.h"
#include "gpu/common/HostInfo.h"
#include "gpu/cuda/CudaCheck.h"
#include "gpu/cuda/DeviceInfo.h"
#include "gpu/cuda/GemmBench.h"
#include "gpu/cuda/MemoryBench.h"

using namespace fabricsim::gpu;

namespace {

std::string utcNow() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string percent(double value, double peak) {
  if (peak <= 0) return "    -";
  char buf[16];
  std::snprintf(buf, sizeof buf, "%5.1f", 100.0 * value / peak);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  ComputeOptions o;
  try {
    o = ComputeOptions::parse(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "fabricsim-gpu-compute: " << e.what() << "\n(--help lists the options)\n";
    return 2;
  }
  if (o.help) {
    std::cout << o.helpText;
    return 0;
  }
  try {
    int count = 0;
    FABRICSIM_CUDA(cudaGetDeviceCount(&count));
    if (o.device >= count)
      throw std::runtime_error("--device " + std::to_string(o.device) + ": only " + std::to_string(count) +
                               " CUDA devices are visible");
    FABRICSIM_CUDA(cudaSetDevice(o.device));
    const std::string name = DeviceInfo::name(o.device);
    const PeakRates peaks = o.peaksFor(name);
    nlohmann::json system = DeviceInfo::versions(false);
    system["timestamp"] = utcNow();
    system["hostname"] = HostInfo::hostname();
    system["gpu"] = DeviceInfo::describe(o.device);
    const GpuTelemetry telemetry(system["gpu"]["pci_bus_id"].get<std::string>());
    system["gpu_telemetry"] = telemetry.describe();
    if (!telemetry.available()) std::printf("# no GPU clocks recorded: %s\n", telemetry.note().c_str());
    system["gpu_model"] = name;
    system["gpu_count"] = 1;

    const auto& s = o.shape;
    std::printf(
        "# fabricsim-gpu-compute on %s (%s), layer %s: hidden %d ffn %d heads %d kv %d seq %d mbs %d tp "
        "%d%s\n",
        name.c_str(), peaks.source.c_str(), s.name.c_str(), s.hidden, s.ffnHidden, s.heads, s.kvHeads,
        s.seqLen, s.microBatch, s.tp, s.gatedMlp ? " gated" : "");
    std::vector<GemmResult> gemms;
    if (!o.skipGemm) {
      GemmBench bench(o.device, o.flushL2);
      std::printf("# %-12s %-16s %7s %7s %7s %5s %5s %10s %8s %6s %6s\n", "gemm", "pass", "m", "n", "k",
                  "batch", "type", "time(us)", "TFLOP/s", "eff%", "SM MHz");
      for (const auto& dtype : o.gemmTypes) {
        for (const auto& shape : transformerLayerGemms(s, o.attention)) {
          gemms.push_back(bench.run(shape, dtype, o.warmupIters, o.iters, o.sustainMs));
          auto& g = gemms.back();
          g.gpuState = telemetry.sampleJson();
          if (g.timeUs) {
            const double tf = ComputeReport::tflops(shape.flops(), *g.timeUs);
            const std::string mhz =
                g.gpuState.is_null() ? "-" : std::to_string(g.gpuState["sm_mhz"].get<unsigned>());
            std::printf("  %-12s %-16s %7ld %7ld %7ld %5ld %5s %10.1f %8.1f %6s %6s\n", shape.name.c_str(),
                        shape.pass.c_str(), shape.m, shape.n, shape.k, shape.batch, dtype.c_str(), *g.timeUs,
                        tf, percent(tf, ComputeReport::peakFor(peaks, dtype)).c_str(), mhz.c_str());
          } else {
            std::printf("  %-12s %-16s %7ld %7ld %7ld %5ld %5s  skipped: %s\n", shape.name.c_str(),
                        shape.pass.c_str(), shape.m, shape.n, shape.k, shape.batch, dtype.c_str(),
                        g.note.c_str());
          }
        }
      }
    }
    std::vector<BandwidthResult> memory;
    std::optional<LaunchLatency> launch;
    if (!o.skipMemory) {
      MemoryBench mem(o.device, o.memoryBytes);
      auto add = [&](BandwidthResult r) {  // with the GPU's state just after its timed passes
        r.gpuState = telemetry.sampleJson();
        memory.push_back(std::move(r));
      };
      add(mem.memcpyDeviceToDevice(o.warmupIters, o.iters));
      add(mem.copyKernel(o.warmupIters, o.iters));
      add(mem.reduceAdd(false, o.warmupIters, o.iters));
      add(mem.reduceAdd(true, o.warmupIters, o.iters));
      launch = mem.launchLatency(o.launchIters);
      std::printf("# %-20s %12s %10s %10s %6s\n", "memory", "bytes", "time(us)", "HBM GB/s", "eff%");
      for (const auto& m : memory) {
        const double gbps = m.trafficFactor * static_cast<double>(m.bytes) / (m.timeUs * 1e-6) / 1e9;
        std::printf("  %-20s %12zu %10.1f %10.1f %6s\n", m.name.c_str(), m.bytes, m.timeUs, gbps,
                    percent(gbps, peaks.hbmGBps).c_str());
      }
      std::printf("# launch latency: %.2f us per launch (back to back), %.2f us launch + synchronize\n",
                  launch->asyncUs, launch->syncUs);
    }
    const auto doc = ComputeReport::toJson(o, name, system, peaks, gemms, memory, launch);
    for (const auto& [dtype, parts] : doc["gemm_summary"].items()) {
      const auto& t = parts["total"];
      std::printf("# layer %s forward+backward: %.1f TFLOP/s", dtype.c_str(), t["tflops"].get<double>());
      if (!t["efficiency"].is_null()) std::printf(" (%.1f%% of peak)", 100.0 * t["efficiency"].get<double>());
      std::printf("\n");
    }
    if (!o.jsonPath.empty()) {
      std::ofstream out(o.jsonPath);
      out << doc.dump(2) << "\n";
      if (!out) throw std::runtime_error("cannot write " + o.jsonPath);
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "fabricsim-gpu-compute: " << e.what() << "\n";
    return 1;
  }
}
