#include "sim/calibrate/CollectiveSimulator.h"

#include <memory>

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

CollectiveAlgorithm CollectiveSimulator::algorithmFor(const Measurement& m) const {
  if (m.algorithm == "ring") return CollectiveAlgorithm::Ring;
  if (m.algorithm == "tree" && m.op == CollectiveOp::AllReduce) return CollectiveAlgorithm::Tree;
  if (m.algorithm == "pat" && (m.op == CollectiveOp::AllGather || m.op == CollectiveOp::ReduceScatter) &&
      m.hosts == m.ranks)
    return CollectiveAlgorithm::Pat;
  if (tuning_.nvls && m.op == CollectiveOp::AllReduce) {
    if (m.algorithm == "nvls") return m.hosts > 1 ? CollectiveAlgorithm::NvlsTree : CollectiveAlgorithm::Nvls;
    if (m.algorithm == "nvlstree") return m.hosts > 1 ? CollectiveAlgorithm::NvlsTree : CollectiveAlgorithm::Nvls;
  }
  return tuning_.algorithm;
}

std::vector<double> CollectiveSimulator::simulate(const Measurement& m, const ModelParameters& p) const {
  TopologySpec spec = testbed_;
  CollectiveTuning tuning = tuning_;
  p.apply(spec, tuning);
  tuning.algorithm = algorithmFor(m);
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
  w.tuning = tuning;
  w.collective.op = m.op;
  w.collective.warmup = backend_ == "packet" ? 1 : 0;
  w.collective.iterations = 1;
  w.collective.elementBytes = 1;  // sizes as measured: no re-rounding to elements
  std::vector<double> out;
  out.reserve(m.points.size());
  for (const auto& pt : m.points) {
    Simulator sim(1);
    std::unique_ptr<Fabric> fabric;
    if (backend_ == "flow")
      fabric = std::make_unique<FlowFabric>(sim, *topo, spec, fib);
    else
      fabric = std::make_unique<PacketFabric>(sim, *topo, spec, fib);
    w.collective.minBytes = w.collective.maxBytes = pt.sizeBytes;
    CollectiveSweep sweep(sim, *fabric, w, gpus, static_cast<int>(gph));
    sweep.start();
    sim.run();
    SIM_CHECK(sweep.finished() && sweep.rows().size() == 1, "a one-size sweep must produce one row");
    out.push_back(sweep.rows().front().time.micros());
  }
  return out;
}

}  // namespace fabricsim
