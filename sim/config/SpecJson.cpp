#include "sim/config/SpecJson.h"

#include "sim/config/WorkloadLoader.h"

namespace fabricsim {
namespace {

nlohmann::json leafSpineJson(const LeafSpineShape& s) {
  return {{"leaves", s.leaves},
          {"spines", s.spines},
          {"hosts_per_leaf", s.hostsPerLeaf},
          {"links_per_spine", s.linksPerSpine}};
}

nlohmann::json fatTreeJson(const FatTreeShape& s) {
  return {{"radix", s.radix}, {"pods", s.pods}, {"hosts_per_edge", s.hostsPerEdge}};
}

/// Traffic-class bit mask -> [0, 3, ...].
nlohmann::json classList(uint8_t mask) {
  nlohmann::json out = nlohmann::json::array();
  for (int c = 0; c < 8; ++c)
    if (mask & (1u << c)) out.push_back(c);
  return out;
}

/// collective, training and trace workloads: the common job keys plus the kind's own.
nlohmann::json jobJson(const WorkloadSpec& spec) {
  const CollectiveTuning& t = spec.tuning;
  nlohmann::json j = {{"file", spec.file},
                      {"name", spec.name},
                      {"kind", spec.kind},
                      {"start_ps", spec.start.picos()},
                      {"calibration", spec.calibrationPath},
                      {"placement",
                       {{"policy", toString(spec.placement.policy)},
                        {"explicit_range", spec.placement.explicitRange},
                        {"first_gpu", spec.placement.firstGpu}}},
                      {"collectives", toJson(t)}};
  if (spec.kind == "collective") {
    const CollectiveSweepSpec& c = spec.collective;
    j["operation"] = toString(c.op);
    j["sizes"] = {{"min_bytes", c.minBytes},
                  {"max_bytes", c.maxBytes},
                  {"factor", c.factor},
                  {"step_bytes", c.stepBytes}};
    j["warmup"] = c.warmup;
    j["iterations"] = c.iterations;
    j["data_type"] = c.dataType;
    j["element_bytes"] = c.elementBytes;
    j["root"] = c.root;
    j["ranks"] = c.ranks;
    j["hosts"] = c.hosts;
    j["gpus_per_host"] = c.gpusPerHost;
  } else if (spec.kind == "training") {
    const TrainingSpec& tr = spec.training;
    const ModelSpec& m = tr.model;
    const GpuSpec& g = tr.gpu;
    const ParallelismSpec& p = tr.parallelism;
    j["model"] = {{"preset", m.preset},        {"layers", m.layers}, {"hidden", m.hidden},
                  {"ffn_hidden", m.ffnHidden}, {"heads", m.heads},   {"kv_heads", m.kvHeads},
                  {"seq_len", m.seqLen},       {"vocab", m.vocab},   {"gated_mlp", m.gatedMlp},
                  {"causal", m.causal},        {"tied_embeddings", m.tiedEmbeddings},
                  {"experts", m.experts},      {"top_k", m.topK},
                  {"moe_ffn_hidden", m.moeFfnHidden}, {"capacity_factor", m.capacityFactor}};
    j["gpu"] = {{"preset", g.preset},
                {"peak_flops", g.peakFlops},
                {"peak_fp8_flops", g.peakFp8Flops},
                {"hbm_bandwidth_bytes_per_second", g.hbmBytesPerSecond},
                {"comm_sm_share", g.commSmShare},
                {"sms", g.sms},
                {"in_step_rate", g.inStepRate},
                {"efficiency",
                 {{"gemm", g.gemmEfficiency},
                  {"attention", g.attentionEfficiency},
                  {"fp8_gemm", g.fp8GemmEfficiency},
                  {"memory", g.memoryEfficiency}}}};
    j["parallelism"] = {{"tp", p.tp},
                        {"pp", p.pp},
                        {"dp", p.dp},
                        {"cp", p.cp},
                        {"ep", p.ep},
                        {"etp", p.etp > 0 ? p.etp : p.tp},
                        {"micro_batch", p.microBatch},
                        {"global_batch", p.globalBatch},
                        {"schedule", p.schedule},
                        {"virtual_stages", p.virtualStages},
                        {"sequence_parallel", p.sequenceParallel},
                        {"distributed_optimizer", p.distributedOptimizer},
                        {"recompute", p.recompute},
                        {"overlap_grad_reduce", p.overlapGradReduce},
                        {"overlap_param_gather", p.overlapParamGather},
                        {"defer_embedding_wgrad_compute", p.deferEmbeddingWgrad},
                        {"wgrad_deferral_limit", p.wgradDeferralLimit},
                        {"tp_comm_overlap", p.tpCommOverlap}};
    if (p.tpCommOverlap) {
      nlohmann::json& cfg = j["parallelism"]["tp_comm_overlap_cfg"];
      for (const auto& [name, t] : p.tpCommOverlapCfg.slots())
        cfg[name] = {{"method", t->method},
                     {"num_sm", t->numSm},
                     {"set_sm_margin", t->smMargin},
                     {"num_splits", t->numSplits}};
    }
    j["iterations"] = tr.iterations;
    j["dtype"] = tr.dtype;
    j["dtype_bytes"] = tr.dtypeBytes;
    j["dp_bucket_bytes"] = tr.dpBucketBytes;
    j["grad_reduce_dtype"] = tr.gradientReduceDtype();
    j["elementwise"] = tr.elementwise;
    j["sp_regather"] = tr.spRegather;
    j["communication"] = tr.communication;
    j["tp_granularity"] = tr.tpGranularity;
  } else if (spec.kind == "trace") {
    j["trace"] = spec.trace.path;
  } else if (spec.kind == "chakra") {
    j["chakra"] = spec.chakra.prefix;
    j["comm_groups"] = spec.chakra.commGroups;
    j["ranks"] = spec.chakra.ranks;
    j["iterations"] = spec.chakra.iterations;
  }
  return j;
}

}  // namespace

nlohmann::json toJson(const CollectiveTuning& t) {
  return {{"algorithm", t.algorithm == CollectiveAlgorithm::Auto && t.algorithmsAllowed != 0x7f
                            ? ncclAlgoList(t.algorithmsAllowed)
                            : std::string(toString(t.algorithm))},
          {"channels", t.channels},
          {"call_channels", t.callChannels},
          {"nvlink_channels", t.nvlinkChannels},
          {"step_latency_nvlink_ps", t.stepLatencyNvlink.picos()},
          {"step_latency_network_ps", t.stepLatencyNetwork.picos()},
          {"protocol_efficiency", t.protocolEfficiency},
          {"chunk_size_bytes", t.chunkSize},
          {"traffic_class", t.trafficClass},
          {"ring_model", t.ringModel == RingModel::Steps       ? "steps"
                         : t.ringModel == RingModel::Pipelined ? "pipelined"
                                                               : "auto"}};
}

nlohmann::json toJson(const TopologySpec& spec) {
  nlohmann::json j;
  j["file"] = spec.file;
  j["name"] = spec.name;
  nlohmann::json topo;
  topo["kind"] = toString(spec.kind);
  switch (spec.kind) {
    case TopologyKind::LeafSpine:
      topo.update(leafSpineJson(spec.leafSpine));
      break;
    case TopologyKind::FatTree:
      topo.update(fatTreeJson(spec.fatTree));
      break;
    case TopologyKind::RailOptimized: {
      topo["rails"] = spec.rail.rails;
      topo["shared_spines"] = spec.rail.sharedSpines;
      nlohmann::json rail = spec.rail.railKind == TopologyKind::LeafSpine ? leafSpineJson(spec.rail.leafSpine)
                                                                          : fatTreeJson(spec.rail.fatTree);
      rail["kind"] = toString(spec.rail.railKind);
      topo["rail"] = rail;
      break;
    }
  }
  j["topology"] = topo;
  j["hosts"] = {{"gpus_per_host", spec.hosts.gpusPerHost},
                {"nics_per_host", spec.hosts.nicsPerHost},
                {"nvlink",
                 {{"bandwidth_bps", spec.hosts.nvlinkBandwidth.bitsPerSecond()},
                  {"latency_ps", spec.hosts.nvlinkLatency.picos()}}}};
  nlohmann::json tiers = nlohmann::json::array();
  for (const auto& t : spec.links.tierSpeeds) tiers.push_back(t.bitsPerSecond());
  j["links"] = {{"technology", spec.links.technology},
                {"host_speed_bps", spec.links.hostSpeed.bitsPerSecond()},
                {"fabric_speed_bps", spec.links.fabricSpeed.bitsPerSecond()},
                {"tier_speeds_bps", tiers},
                {"latency_ps", spec.links.latency.picos()},
                {"mtu_bytes", spec.links.mtu}};
  j["switch"] = {{"buffer_bytes", spec.sw.buffer},
                 {"latency_ps", spec.sw.latency.picos()},
                 {"dt_alpha", spec.sw.dtAlpha},
                 {"credit_buffer_bytes", spec.sw.creditBuffer},
                 {"reserve_bytes", spec.sw.reserve},
                 {"ecn",
                  {{"enabled", spec.sw.ecn.enabled},
                   {"kmin_bytes", spec.sw.ecn.kmin},
                   {"kmax_bytes", spec.sw.ecn.kmax},
                   {"pmax", spec.sw.ecn.pmax},
                   {"mark_on", spec.sw.ecn.markOnDequeue ? "dequeue" : "enqueue"},
                   {"classes", classList(spec.sw.ecn.classMask)}}},
                 {"pfc",
                  {{"enabled", spec.sw.pfc.enabled},
                   {"xoff_bytes", spec.sw.pfc.xoff},
                   {"xon_bytes", spec.sw.pfc.xon},
                   {"dynamic_alpha", spec.sw.pfc.dynamicAlpha},
                   {"xon_delta_bytes", spec.sw.pfc.xonDelta},
                   {"headroom_bytes", spec.sw.pfc.headroom},
                   {"quanta", spec.sw.pfc.quanta},
                   {"response_time_ps", spec.sw.pfc.responseTime.picos()},
                   {"storm_watchdog",
                    {{"detection_ps", spec.sw.pfc.stormDetection.picos()},
                     {"restoration_ps", spec.sw.pfc.stormRestoration.picos()}}},
                   {"classes", classList(spec.sw.pfc.classMask)}}}};
  const BgpSpec& bgp = spec.routing.bgp;
  j["routing"] = {{"algorithm", spec.routing.algorithm},
                  {"control_plane", spec.routing.controlPlane},
                  {"hash_seed", spec.routing.hashSeed},
                  {"flowlet_gap_ps", spec.routing.flowletGap.picos()},
                  {"adaptive_bias_bytes", spec.routing.adaptiveBias},
                  {"adaptive_quantum_bytes", spec.routing.adaptiveQuantum},
                  {"spray", spec.routing.spray},
                  {"hash_fields", spec.routing.hashFields},
                  {"seeds", spec.routing.seeds},
                  {"resilient_buckets", spec.routing.resilientBuckets},
                  {"wcmp", spec.routing.wcmp},
                  {"local_failover", spec.routing.localFailover},
                  {"failover_delay_ps", spec.routing.failoverDelay.picos()},
                  {"bgp",
                   {{"asn_scheme", bgp.asnScheme},
                    {"update_delay_ps", bgp.updateDelay.picos()},
                    {"mrai_ps", bgp.mrai.picos()},
                    {"detection", bgp.detection},
                    {"bfd_interval_ps", bgp.bfdInterval.picos()},
                    {"bfd_multiplier", bgp.bfdMultiplier}}}};
  j["routing"]["ib_sm"] = {{"engine", spec.routing.ibSm.engine},
                           {"lmc", spec.routing.ibSm.lmc},
                           {"adaptive", spec.routing.ibSm.adaptive},
                           {"reroute_delay_ps", spec.routing.ibSm.rerouteDelay.picos()}};
  j["nic"] = {
      {"reorder", spec.nic.reorder},        {"retransmit_timeout_ps", spec.nic.retransmitTimeout.picos()},
      {"rto_backoff", spec.nic.rtoBackoff}, {"max_rto_ps", spec.nic.maxRto.picos()},
      {"retry_limit", spec.nic.retryLimit}, {"local_ack_timeout", spec.nic.localAckTimeout},
      {"retry_count", spec.nic.retryCount}, {"ack_every", spec.nic.ackEvery},
      {"window_bytes", spec.nic.window},    {"failover", spec.nic.failover}};
  // Both controllers' parameters, whichever runs, so every results file has the same keys.
  const DcqcnSpec& d = spec.congestionControl.dcqcn;
  const IbCcSpec& ib = spec.congestionControl.ibcc;
  j["congestion_control"] = {{"algorithm", spec.congestionControl.algorithm},
                             {"preset", d.preset},
                             {"dcqcn",
                              {{"variant", d.variant},
                               {"g", d.g},
                               {"initial_alpha", d.initialAlpha},
                               {"alpha_timer_ps", d.alphaTimer.picos()},
                               {"rate_increase_timer_ps", d.rateIncreaseTimer.picos()},
                               {"byte_counter_bytes", d.byteCounter},  // 0: off
                               {"fast_recovery_stages", d.fastRecoveryStages},
                               {"additive_increase_bps", d.additiveIncrease.bitsPerSecond()},
                               {"hyper_increase_bps", d.hyperIncrease.bitsPerSecond()},
                               {"min_rate_bps", d.minRate.bitsPerSecond()},
                               {"rate_reduce_interval_ps", d.rateReduceInterval.picos()},
                               {"max_decrease_fraction", d.maxDecreaseFraction},
                               {"clamp_target_rate", d.clampTargetRate},
                               {"clamp_target_rate_after_time_increase", d.clampTargetRateAfterTimeIncrease},
                               {"rate_on_first_cnp_bps", d.rateOnFirstCnp.bitsPerSecond()},
                               {"cnp_interval_ps", d.cnpInterval.picos()}}},
                             {"ibcc",
                              {{"ccti_increase", ib.cctiIncrease},
                               {"ccti_limit", ib.cctiLimit},
                               {"ccti_timer_ps", ib.cctiTimer.picos()},
                               {"cct_scale", ib.cctScale},
                               {"becn_interval_ps", ib.becnInterval.picos()}}}};
  j["workload"] = spec.workload;
  nlohmann::json failures = nlohmann::json::array();
  for (const auto& f : spec.failures) {
    nlohmann::json e = {{"at_ps", f.at.picos()}, {"action", f.action}};
    if (!f.link.empty()) e["link"] = f.link;
    if (!f.node.empty()) e["switch"] = f.node;
    if (!f.host.empty()) e["host"] = f.host;
    if (!f.nicHost.empty()) e["nic"] = f.nicHost + "/" + std::to_string(f.nicIndex);
    failures.push_back(e);
  }
  j["failures"] = failures;
  j["episodes"] = {{"seeds", spec.episodes.seeds},
                   {"replicas", spec.episodes.replicas},
                   {"tolerance", spec.episodes.tolerance},
                   {"max_rounds", spec.episodes.maxRounds}};
  j["watchdog"] = {{"interval_ps", spec.watchdog.interval.picos()},
                   {"no_progress_ps", spec.watchdog.noProgress.picos()},
                   {"pfc_deadlock", spec.watchdog.pfcDeadlock}};
  return j;
}

nlohmann::json toJson(const WorkloadSpec& spec) {
  if (spec.kind != "pattern") return jobJson(spec);
  const PatternSpec& p = spec.pattern;
  nlohmann::json j = {{"file", spec.file},
                      {"name", spec.name},
                      {"kind", spec.kind},
                      {"pattern", toString(p.pattern)},
                      {"message_size_bytes", p.messageSize},
                      {"start_ps", p.start.picos()},
                      {"repetitions", p.repetitions},
                      {"gap_ps", p.gap.picos()},
                      {"traffic_class", p.trafficClass},
                      {"gpus", {{"first", p.firstGpu}, {"count", p.gpus}}},
                      {"qps_per_pair", p.qpsPerPair}};
  if (p.pattern == PatternKind::Incast)
    j["incast"] = {{"senders", p.incastSenders}, {"receiver", p.incastReceiver}};
  return j;
}

}  // namespace fabricsim
