#include "sim/calibrate/CollectiveSimulator.h"

#include <algorithm>
#include <memory>
#include <optional>

#include "sim/config/WorkloadLoader.h"
#include "sim/core/Error.h"
#include "sim/core/Simulator.h"
#include "sim/flow/FlowFabric.h"
#include "sim/packet/PacketFabric.h"
#include "sim/routing/EcmpFib.h"
#include "sim/topology/Topology.h"
#include "sim/topology/TopologyBuilder.h"
#include "sim/workload/CollectiveSweep.h"

namespace fabricsim {

CollectiveSimulator::CollectiveSimulator(TopologySpec testbed, CollectiveTuning tuning, std::string backend)
    : testbed_(std::move(testbed)), tuning_(tuning), backend_(std::move(backend)) {
  if (backend_ != "flow" && backend_ != "packet")
    throw InputError("", 0, 0, "--backend", "expected 'packet' or 'flow', found '" + backend_ + "'");
}

namespace {

/// The simulated algorithm for NCCL's `name` (fabricsim's spelling, lower case: "ring", "tree",
/// "nvls", "nvls_tree" or "nvlstree", "pat", "collnet_direct", ...) of an `op` over `hosts` hosts
/// of `ranks` ranks; nullopt where nothing simulated matches (`why` says what).
std::optional<CollectiveAlgorithm> simulatedAlgorithm(const std::string& name, CollectiveOp op, uint32_t hosts,
                                                      uint32_t ranks, bool nvls, std::string& why) {
  if (name == "ring") return CollectiveAlgorithm::Ring;
  if (name == "tree") {
    if (op == CollectiveOp::AllReduce) return CollectiveAlgorithm::Tree;
    why = "NCCL runs tree only for all-reduce";
    return std::nullopt;
  }
  if (name == "pat") {
    if ((op == CollectiveOp::AllGather || op == CollectiveOp::ReduceScatter) && hosts == ranks)
      return CollectiveAlgorithm::Pat;
    why = "PAT runs all-gather and reduce-scatter with one GPU per host";
    return std::nullopt;
  }
  if (name == "nvls" || name == "nvls_tree" || name == "nvlstree") {
    if (nvls && op == CollectiveOp::AllReduce)
      return hosts > 1 ? CollectiveAlgorithm::NvlsTree : CollectiveAlgorithm::Nvls;
    why = nvls ? "NVLS is simulated for all-reduce only" : "the calibration has nvls: false";
    return std::nullopt;
  }
  if (name.rfind("collnet", 0) == 0) {
    why = "CollNet (in-network reduction) is not simulated";
    return std::nullopt;
  }
  why = "expected ring, tree, nvls, nvls_tree, pat or collnet_direct/collnet_chain";
  return std::nullopt;
}

std::optional<CollectiveProtocol> simulatedProtocol(const std::string& name) {
  if (name == "ll") return CollectiveProtocol::LL;
  if (name == "ll128") return CollectiveProtocol::LL128;
  if (name == "simple") return CollectiveProtocol::Simple;
  return std::nullopt;
}

}  // namespace

CollectiveAlgorithm CollectiveSimulator::algorithmFor(const Measurement& m) const {
  if (m.algorithm.empty()) return tuning_.algorithm;
  if (m.algorithm.find_first_of(",^") != std::string::npos) {
    // A list NCCL chose from: auto among those (tuningFor); an unknown name is an error.
    if (!parseNcclAlgoList(m.algorithm))
      throw InputError(m.label, 0, 0, "algorithm",
                       "the measurement ran NCCL_ALGO=" + m.algorithm +
                           ", expected NCCL's algorithm names (Tree, Ring, CollNetDirect, CollNetChain, NVLS, "
                           "NVLSTree, PAT) allowing at least one");
    return CollectiveAlgorithm::Auto;
  }
  std::string why;
  if (const auto a = simulatedAlgorithm(m.algorithm, m.op, m.hosts, m.ranks, tuning_.nvls, why)) return *a;
  throw InputError(m.label, 0, 0, "algorithm",
                   "the measurement ran NCCL_ALGO=" + m.algorithm + ", which cannot be simulated here: " + why);
}

CollectiveTuning CollectiveSimulator::tuningFor(const Measurement& m, const Measurement::Point& pt,
                                                const CollectiveTuning& base) const {
  CollectiveTuning t = base;
  const auto fail = [&](const std::string& key, const std::string& what) {
    throw InputError(m.file, pt.line, 0, key,
                     "at " + std::to_string(pt.sizeBytes) + " bytes (" + m.label + "): " + what);
  };
  if (!pt.ncclAlgorithm.empty()) {
    std::string why;
    const auto a = simulatedAlgorithm(pt.ncclAlgorithm, m.op, m.hosts, m.ranks, tuning_.nvls, why);
    if (!a) fail("nccl.algorithm", "NCCL ran '" + pt.ncclAlgorithm + "', which cannot be simulated here: " + why);
    t.algorithm = *a;
  } else {
    t.algorithm = algorithmFor(m);
    if (t.algorithm == CollectiveAlgorithm::Auto && !m.algorithm.empty())
      t.algorithmsAllowed = *parseNcclAlgoList(m.algorithm);
  }
  if (!m.protocol.empty()) {
    // NCCL_PROTO of the run: one protocol pins it, a list ("LL,LL128", "^LL128") is NCCL's
    // choice among those.
    const auto p = parseProtocolSetting(m.protocol);
    if (!p)
      throw InputError(m.label, 0, 0, "protocol",
                       "the measurement ran NCCL_PROTO=" + m.protocol +
                           ", expected NCCL's protocol names (LL, LL128, Simple) allowing at least one");
    t.protocol = p->first;
    t.protocolsAllowed = p->second;
  }
  if (!pt.ncclProtocol.empty()) {
    const auto p = simulatedProtocol(pt.ncclProtocol);
    if (!p) fail("nccl.protocol", "expected ll, ll128 or simple, found '" + pt.ncclProtocol + "'");
    t.protocol = *p;
  }
  // The run's NCCL_MIN/MAX_CTAS (NCHANNELS) bound the communicator's channels.
  if (m.minChannels > 0) t.channels = std::max(t.channels, m.minChannels);
  if (m.maxChannels > 0) t.channels = std::min(t.channels, m.maxChannels);
  if (pt.ncclChannels > 0) t.callChannels = pt.ncclChannels;
  return t;
}

std::vector<double> CollectiveSimulator::simulate(const Measurement& m, const ModelParameters& p) const {
  std::vector<double> out;
  for (const Run& r : simulateRuns(m, p)) out.push_back(r.timeUs);
  return out;
}

std::vector<CollectiveSimulator::Run> CollectiveSimulator::simulateRuns(const Measurement& m,
                                                                        const ModelParameters& p) const {
  TopologySpec spec = testbed_;
  CollectiveTuning tuning = tuning_;
  p.apply(spec, tuning);
  const auto topo = buildTopology(spec);
  const auto gph = static_cast<uint32_t>(topo->gpusPerHost());
  if (m.gpusPerHost > gph || static_cast<size_t>(m.hosts) * gph > topo->gpuCount())
    throw InputError(m.label, 0, 0, "",
                     "the measurement has " + std::to_string(m.hosts) + " hosts x " +
                         std::to_string(m.gpusPerHost) + " GPUs; the testbed '" + spec.file + "' has " +
                         std::to_string(topo->gpuCount() / gph) + " hosts x " + std::to_string(gph) +
                         " GPUs");
  std::vector<uint32_t> gpus;
  for (uint32_t h = 0; h < m.hosts; ++h)
    for (uint32_t g = 0; g < m.gpusPerHost; ++g) gpus.push_back(h * gph + g);
  const EcmpFib fib(*topo, spec.routing.hashSeed, EcmpFib::optionsFor(spec.routing));

  WorkloadSpec w;
  w.kind = "collective";
  w.name = m.label;
  w.file = m.file;
  w.collective.op = m.op;
  w.collective.warmup = backend_ == "packet" ? 1 : 0;
  w.collective.iterations = 1;
  w.collective.elementBytes = 1;  // sizes as measured: no re-rounding to elements
  std::vector<Run> out;
  out.reserve(m.points.size());
  for (const auto& pt : m.points) {
    Simulator sim(1);
    std::unique_ptr<Fabric> fabric;
    if (backend_ == "flow")
      fabric = std::make_unique<FlowFabric>(sim, *topo, spec, fib);
    else
      fabric = std::make_unique<PacketFabric>(sim, *topo, spec, fib);
    w.tuning = tuningFor(m, pt, tuning);
    w.collective.minBytes = w.collective.maxBytes = pt.sizeBytes;
    CollectiveSweep sweep(sim, *fabric, w, gpus, static_cast<int>(gph));
    sweep.start();
    sim.run();
    SIM_CHECK(sweep.finished() && sweep.rows().size() == 1, "a one-size sweep must produce one row");
    const CollectiveSweepRow& row = sweep.rows().front();
    out.push_back({row.time.micros(), row.algorithm, row.protocol, row.ncclModelUs.value_or(0.0)});
  }
  return out;
}

}  // namespace fabricsim
