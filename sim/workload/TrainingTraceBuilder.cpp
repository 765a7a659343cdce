#include "sim/workload/TrainingTraceBuilder.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "sim/core/Error.h"
#include "sim/workload/ComputeModel.h"
#include "sim/workload/TransformerModel.h"

namespace fabricsim {

namespace {

/// Everything every stage's program needs: the validated shape of the job and the per-op
/// compute times and message sizes.
struct Plan {
  int tp = 1, pp = 1, dp = 1, v = 1, m = 1, b = 1;
  /// Layers of virtual stage j = chunk * pp + stage (layersOfVirtualStages).
  std::vector<int> layersOfVirtual;
  bool sp = false, recompute = false, stageGranularity = false, distOpt = false, interleaved = false;
  bool vocab = false;
  uint16_t tpComm = 0, ppComm = 0, dpComm = 0;
  Bytes tpBytes = 0;      ///< one TP collective
  Bytes ppBytes = 0;      ///< one pipeline message per TP rank
  Bytes bucketBytes = 0;  ///< DP bucket
  int64_t paramsPerLayer = 0, embeddingParams = 0, outputParams = 0;
  // Compute times of one micro-batch.
  Time attnFwd, mlpFwd, attnBwd, mlpBwd;  ///< per layer ("layer" granularity)
  /// All layers of virtual stage j ("stage" granularity), indexed like layersOfVirtual.
  std::vector<Time> chunkFwd, chunkBwd;
  Time logitsFwd, logitsBwd, embedding;
  const TransformerModel* model = nullptr;
  const ComputeModel* compute = nullptr;
};

/// Builds the program of one pipeline stage.
class StageBuilder {
 public:
  StageBuilder(const Plan& plan, int stage) : plan_(plan), stage_(stage) {
    compute_ = prog_.stream("compute");
    recvFwd_ = prog_.stream("pp-recv-fwd");
    sendFwd_ = prog_.stream("pp-send-fwd");
    recvBwd_ = prog_.stream("pp-recv-bwd");
    sendBwd_ = prog_.stream("pp-send-bwd");
    dpStream_ = prog_.stream("dp");
    for (int c = 0; c < plan_.v; ++c) layerDone_.emplace_back(static_cast<size_t>(layers(c)), 0);
  }

  Program build() {
    schedule();
    dataParallel();
    return std::move(prog_);
  }

 private:
  // --- op emission -------------------------------------------------------------------------

  /// Appends an op on the compute stream, giving it the pending dependencies (the receive
  /// that feeds the pass).
  uint32_t emitCompute(TraceOp op) {
    op.stream = compute_;
    op.deps = std::move(pending_);
    pending_.clear();
    prog_.ops.push_back(std::move(op));
    return static_cast<uint32_t>(prog_.ops.size() - 1);
  }

  uint32_t computeOp(const char* label, Time duration) {
    TraceOp op;
    op.type = OpType::Compute;
    op.duration = duration;
    op.label = prog_.label(label);
    return emitCompute(std::move(op));
  }

  void tpCollective(CollectiveOp kind, Bytes bytes) {
    if (plan_.tp == 1) return;
    TraceOp op;
    op.type = OpType::Collective;
    op.collective = kind;
    op.comm = plan_.tpComm;
    op.bytes = bytes;
    op.label = prog_.label(kind == CollectiveOp::AllReduce       ? "tp-allreduce"
                           : kind == CollectiveOp::ReduceScatter ? "tp-reducescatter"
                                                                 : "tp-allgather");
    emitCompute(std::move(op));
  }

  /// Megatron's "g" after a block in forward (and "f" in backward): all-reduce, or
  /// reduce-scatter with sequence parallelism.
  void tpReduce(Bytes bytes) {
    tpCollective(plan_.sp ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce, bytes);
  }
  /// With sequence parallelism, the all-gather before a block (identity without).
  void tpGather(Bytes bytes) {
    if (plan_.sp) tpCollective(CollectiveOp::AllGather, bytes);
  }

  uint32_t p2p(OpType type, uint8_t stream, int32_t offset, std::vector<uint32_t> deps) {
    TraceOp op;
    op.type = type;
    op.stream = stream;
    op.comm = plan_.ppComm;
    op.peerOffset = offset;
    op.bytes = plan_.ppBytes;
    op.label = prog_.label(type == OpType::Send ? "pp-send" : "pp-recv");
    op.deps = std::move(deps);
    prog_.ops.push_back(std::move(op));
    return static_cast<uint32_t>(prog_.ops.size() - 1);
  }

  uint32_t lastOp() const { return static_cast<uint32_t>(prog_.ops.size() - 1); }

  // --- passes ------------------------------------------------------------------------------

  size_t virtualStage(int chunk) const { return static_cast<size_t>(chunk * plan_.pp + stage_); }
  int layers(int chunk) const { return plan_.layersOfVirtual[virtualStage(chunk)]; }
  bool firstVirtual(int chunk) const { return chunk == 0 && stage_ == 0; }
  bool lastVirtual(int chunk) const { return chunk == plan_.v - 1 && stage_ == plan_.pp - 1; }

  /// Forward of every layer of a chunk (also the recomputation in backward, under `label`).
  void layersForward(int chunk, const char* label) {
    const Bytes s = plan_.tpBytes;
    if (plan_.stageGranularity) {
      const Bytes total = 2 * s * layers(chunk);
      tpGather(total);
      computeOp(label, plan_.chunkFwd[virtualStage(chunk)]);
      tpReduce(total);
      return;
    }
    for (int l = 0; l < layers(chunk); ++l) {
      tpGather(s);
      computeOp(label, plan_.attnFwd);
      tpReduce(s);
      tpGather(s);
      computeOp(label, plan_.mlpFwd);
      tpReduce(s);
    }
  }

  void forward(int chunk) {
    const bool first = firstVirtual(chunk), last = lastVirtual(chunk);
    if (!first) pending_ = {p2p(OpType::Recv, recvFwd_, -1, {})};
    if (first && plan_.vocab) {
      computeOp("embedding", plan_.embedding);
      tpReduce(plan_.tpBytes);  // vocab-parallel embedding: partial rows summed over TP
    }
    layersForward(chunk, "fwd");
    if (last && plan_.vocab) {
      tpGather(plan_.tpBytes);
      computeOp("logits", plan_.logitsFwd);
    }
    if (!last) p2p(OpType::Send, sendFwd_, +1, {lastOp()});
  }

  void backward(int chunk) {
    const bool first = firstVirtual(chunk), last = lastVirtual(chunk);
    const Bytes s = plan_.tpBytes;
    if (!last) pending_ = {p2p(OpType::Recv, recvBwd_, +1, {})};
    if (last && plan_.vocab) {
      logitsDone_ = computeOp("logits", plan_.logitsBwd);
      tpReduce(s);  // conjugate of the identity before the column-parallel output layer
    }
    std::vector<uint32_t>& done = layerDone_[static_cast<size_t>(chunk)];
    if (plan_.stageGranularity) {
      const int perLayer = plan_.recompute ? 4 : 2;
      const Bytes total = perLayer * s * layers(chunk);
      tpGather(total);
      if (plan_.recompute) computeOp("recompute", plan_.chunkFwd[virtualStage(chunk)]);
      const uint32_t op = computeOp("bwd", plan_.chunkBwd[virtualStage(chunk)]);
      tpReduce(total);
      std::fill(done.begin(), done.end(), op);
    } else {
      for (int l = layers(chunk) - 1; l >= 0; --l) {
        if (plan_.recompute) {
          tpGather(s);
          computeOp("recompute", plan_.attnFwd);
          tpReduce(s);
          tpGather(s);
          computeOp("recompute", plan_.mlpFwd);
          tpReduce(s);
        }
        tpGather(s);
        computeOp("bwd", plan_.mlpBwd);
        tpReduce(s);
        tpGather(s);
        done[static_cast<size_t>(l)] = computeOp("bwd", plan_.attnBwd);
        tpReduce(s);
      }
    }
    if (first && plan_.vocab) {
      tpGather(s);  // conjugate of the embedding's reduce-scatter
      embeddingDone_ = computeOp("embedding", plan_.embedding);
    }
    if (!first) p2p(OpType::Send, sendBwd_, -1, {lastOp()});
  }

  /// Megatron's order of forward and backward passes on this stage.
  void schedule() {
    const int p = plan_.pp, m = plan_.m, v = plan_.v, s = stage_;
    if (!plan_.interleaved) {
      const int warmup = std::min(p - s - 1, m);
      const int remaining = m - warmup;
      for (int j = 0; j < warmup; ++j) forward(0);
      for (int i = 0; i < remaining; ++i) {
        forward(0);
        backward(0);
      }
      for (int i = remaining; i < m; ++i) backward(0);
      return;
    }
    // forward_backward_pipelining_with_interleaving: the k-th pass uses chunk (k / p) % v
    // (reversed for backward).
    const int total = m * v;
    const int warmup = m == p ? total : std::min((p - s - 1) * 2 + (v - 1) * p, total);
    const int remaining = total - warmup;
    auto chunkOf = [&](int k, bool fwd) {
      const int c = (k % (p * v)) / p;
      return fwd ? c : v - 1 - c;
    };
    for (int k = 0; k < warmup; ++k) forward(chunkOf(k, true));
    for (int i = 0; i < remaining; ++i) {
      forward(chunkOf(warmup + i, true));
      backward(chunkOf(i, false));
    }
    for (int i = remaining; i < total; ++i) backward(chunkOf(i, false));
  }

  /// Gradient buckets in the order their gradients become final, the optimizer step, and the
  /// distributed optimizer's parameter all-gather.
  void dataParallel() {
    struct Segment {
      int64_t params;
      uint32_t done;  ///< the op after which this segment's gradients are final
    };
    std::vector<Segment> segments;
    for (int c = 0; c < plan_.v; ++c) {
      if (lastVirtual(c) && plan_.vocab) segments.push_back({plan_.outputParams, logitsDone_});
      for (int l = layers(c) - 1; l >= 0; --l) {
        segments.push_back(
            {plan_.paramsPerLayer, layerDone_[static_cast<size_t>(c)][static_cast<size_t>(l)]});
      }
      if (firstVirtual(c) && plan_.vocab) segments.push_back({plan_.embeddingParams, embeddingDone_});
    }
    std::stable_sort(segments.begin(), segments.end(),
                     [](const Segment& a, const Segment& b) { return a.done < b.done; });
    int64_t params = 0;
    std::vector<Bytes> boundary;  // cumulative gradient bytes per rank after each segment
    for (const Segment& seg : segments) {
      params += seg.params;
      boundary.push_back(plan_.model->gradientBytesPerRank(params));
    }
    const Bytes gradBytes = boundary.empty() ? 0 : boundary.back();

    struct Bucket {
      Bytes bytes;
      uint32_t dep;
    };
    std::vector<Bucket> buckets;
    if (plan_.dp > 1) {
      size_t seg = 0;
      for (Bytes start = 0; start < gradBytes;) {
        const Bytes end = std::min(start + plan_.bucketBytes, gradBytes);
        while (boundary[seg] < end) ++seg;
        buckets.push_back({end - start, segments[seg].done});
        start = end;
      }
    }
    std::vector<uint32_t> dpOps;
    for (const Bucket& bucket : buckets) {
      dpOps.push_back(dpCollective(plan_.distOpt ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce,
                                   bucket.bytes, {bucket.dep}));
    }
    int64_t optimizerParams = (params + plan_.tp - 1) / plan_.tp;
    if (plan_.distOpt) optimizerParams = (optimizerParams + plan_.dp - 1) / plan_.dp;
    pending_ = dpOps;
    const uint32_t optimizer = computeOp("optimizer", plan_.compute->optimizerTime(optimizerParams));
    if (plan_.distOpt) {
      for (const Bucket& bucket : buckets) dpCollective(CollectiveOp::AllGather, bucket.bytes, {optimizer});
    }
  }

  uint32_t dpCollective(CollectiveOp kind, Bytes bytes, std::vector<uint32_t> deps) {
    TraceOp op;
    op.type = OpType::Collective;
    op.stream = dpStream_;
    op.collective = kind;
    op.comm = plan_.dpComm;
    op.bytes = bytes;
    op.label = prog_.label(kind == CollectiveOp::AllReduce       ? "dp-allreduce"
                           : kind == CollectiveOp::ReduceScatter ? "dp-reducescatter"
                                                                 : "dp-allgather");
    op.deps = std::move(deps);
    prog_.ops.push_back(std::move(op));
    return lastOp();
  }

  const Plan& plan_;
  const int stage_;
  Program prog_;
  uint8_t compute_ = 0, recvFwd_ = 0, sendFwd_ = 0, recvBwd_ = 0, sendBwd_ = 0, dpStream_ = 0;
  std::vector<uint32_t> pending_;
  std::vector<std::vector<uint32_t>> layerDone_;  ///< [chunk][layer in chunk]: last backward op
  uint32_t logitsDone_ = 0;
  uint32_t embeddingDone_ = 0;
};

/// Checks the parts of the spec the trace depends on; throws InputError naming `source`.
void validate(const TrainingSpec& spec, const std::string& source) {
  auto need = [&](bool ok, const std::string& key, const std::string& message) {
    if (!ok) throw InputError(source, 0, 0, key, message);
  };
  const ModelSpec& model = spec.model;
  const ParallelismSpec& par = spec.parallelism;
  const GpuSpec& gpu = spec.gpu;
  auto positive = [&](int value, const std::string& key) {
    need(value >= 1, key, "expected a positive integer, found " + std::to_string(value));
  };
  positive(model.layers, "model.layers");
  positive(model.hidden, "model.hidden");
  positive(model.heads, "model.heads");
  positive(model.seqLen, "model.seq_len");
  need(model.ffnHidden >= 0, "model.ffn_hidden", "expected 0 (4 * hidden) or a positive integer");
  need(model.kvHeads >= 0, "model.kv_heads", "expected 0 (= heads) or a positive integer");
  need(model.vocab >= 0, "model.vocab", "expected 0 (no embedding) or a positive integer");
  need(model.hidden % model.heads == 0, "model.hidden",
       "hidden (" + std::to_string(model.hidden) + ") must be a multiple of heads (" +
           std::to_string(model.heads) + ")");
  const int kv = model.kvHeads > 0 ? model.kvHeads : model.heads;
  need(kv <= model.heads && model.heads % kv == 0, "model.kv_heads",
       "kv_heads (" + std::to_string(kv) + ") must divide heads (" + std::to_string(model.heads) + ")");
  positive(par.tp, "parallelism.tp");
  positive(par.pp, "parallelism.pp");
  positive(par.dp, "parallelism.dp");
  positive(par.microBatch, "parallelism.micro_batch");
  positive(par.globalBatch, "parallelism.global_batch");
  positive(spec.iterations, "iterations");
  positive(spec.dtypeBytes, "dtype");
  need(spec.dpBucketBytes >= 0, "dp_bucket", "expected 0 (Megatron's default) or a positive size");
  need(static_cast<int64_t>(par.tp) * par.pp * par.dp <= UINT32_MAX, "parallelism",
       "tp * pp * dp is too large");
  need(model.heads % par.tp == 0, "parallelism.tp",
       "tp (" + std::to_string(par.tp) + ") must divide the attention heads (" + std::to_string(model.heads) +
           ")");
  const int64_t perStep = static_cast<int64_t>(par.microBatch) * par.dp;
  need(par.globalBatch % perStep == 0, "parallelism.global_batch",
       "global_batch (" + std::to_string(par.globalBatch) + ") must be a multiple of micro_batch * dp (" +
           std::to_string(perStep) + ")");
  need(par.schedule == "1f1b" || par.schedule == "interleaved", "parallelism.schedule",
       "expected 1f1b or interleaved, found '" + par.schedule + "'");
  need(par.recompute == "none" || par.recompute == "full", "parallelism.recompute",
       "expected none or full, found '" + par.recompute + "'");
  need(spec.tpGranularity == "layer" || spec.tpGranularity == "stage", "tp_granularity",
       "expected layer or stage, found '" + spec.tpGranularity + "'");
  positive(par.virtualStages, "parallelism.virtual_stages");
  const bool interleaved = par.schedule == "interleaved";
  const int v = interleaved ? par.virtualStages : 1;
  if (interleaved) {
    need(par.virtualStages > 1, "parallelism.virtual_stages",
         "the interleaved schedule needs virtual_stages > 1");
    // With two stages, both neighbours of a stage are the same rank and forward and backward
    // messages between one pair of ranks could be matched out of order.
    need(par.pp > 2, "parallelism.pp",
         "the interleaved schedule needs pp > 2, found " + std::to_string(par.pp));
    const int64_t m = par.globalBatch / perStep;
    need(m % par.pp == 0, "parallelism.global_batch",
         "the interleaved schedule needs micro-batches per pipeline (" + std::to_string(m) +
             ") to be a multiple of pp (" + std::to_string(par.pp) + ")");
  } else {
    need(par.virtualStages == 1, "parallelism.virtual_stages",
         "virtual_stages > 1 needs schedule: interleaved");
  }
  need(model.layers >= static_cast<int64_t>(par.pp) * v, "model.layers",
       "layers (" + std::to_string(model.layers) + ") must be at least pp * virtual_stages (" +
           std::to_string(static_cast<int64_t>(par.pp) * v) + "): every virtual stage needs a layer");
  need(gpu.peakFlops > 0, "gpu.peak", "expected a positive FLOP rate");
  need(gpu.hbmBytesPerSecond > 0, "gpu.hbm_bandwidth", "expected a positive bandwidth");
  need(gpu.gemmEfficiency > 0 && gpu.gemmEfficiency <= 1, "gpu.efficiency.gemm",
       "expected a value in (0, 1]");
  need(gpu.attentionEfficiency > 0 && gpu.attentionEfficiency <= 1, "gpu.efficiency.attention",
       "expected a value in (0, 1]");
}

std::string describe(const TrainingSpec& spec, int m) {
  const ParallelismSpec& par = spec.parallelism;
  std::string model = spec.model.preset;
  if (model.empty()) {
    model = "custom-" + std::to_string(spec.model.layers) + "l-" + std::to_string(spec.model.hidden) + "h";
  }
  std::string out = "training " + model + " tp" + std::to_string(par.tp) + " pp" + std::to_string(par.pp) +
                    " dp" + std::to_string(par.dp) + " mb" + std::to_string(par.microBatch) + " gb" +
                    std::to_string(par.globalBatch) + " m" + std::to_string(m) + " " + par.schedule;
  if (par.schedule == "interleaved") out += " v" + std::to_string(par.virtualStages);
  if (par.sequenceParallel) out += " sp";
  if (par.distributedOptimizer) out += " distopt";
  if (par.recompute == "full") out += " recompute";
  if (spec.tpGranularity == "stage") out += " tp-per-stage";
  return out;
}

}  // namespace

std::vector<int> layersOfVirtualStages(int layers, int virtualStages) {
  SIM_CHECK(virtualStages >= 1 && layers >= virtualStages, "every virtual stage needs a layer");
  const int base = layers / virtualStages;
  int extra = layers % virtualStages;
  std::vector<int> out(static_cast<size_t>(virtualStages), base);
  // Preference order for the extra layers: 1, 2, ..., V - 2, then 0. The last virtual stage
  // never gets one (extra <= V - 1).
  for (int j = 1; j < virtualStages - 1 && extra > 0; ++j, --extra) ++out[static_cast<size_t>(j)];
  if (extra > 0) ++out[0];
  return out;
}

JobTrace buildTrainingTrace(const TrainingSpec& spec, const CollectiveTuning& tuning,
                            const std::string& name) {
  (void)tuning;  // collectives use Auto: the run's tuning decides
  validate(spec, name);
  const ParallelismSpec& par = spec.parallelism;
  const TransformerModel model(spec.model, spec.dtypeBytes, par.tp, par.sequenceParallel);
  const ComputeModel compute(spec.gpu);

  Plan plan;
  plan.tp = par.tp;
  plan.pp = par.pp;
  plan.dp = par.dp;
  plan.interleaved = par.schedule == "interleaved";
  plan.v = plan.interleaved ? par.virtualStages : 1;
  plan.b = par.microBatch;
  plan.m = par.globalBatch / (par.microBatch * par.dp);
  plan.layersOfVirtual = layersOfVirtualStages(model.layers(), plan.pp * plan.v);
  plan.sp = par.sequenceParallel && par.tp > 1;
  plan.recompute = par.recompute == "full";
  plan.stageGranularity = spec.tpGranularity == "stage";
  plan.distOpt = par.distributedOptimizer;
  plan.vocab = model.vocab() > 0;
  plan.tpBytes = model.tpCollectiveBytes(plan.b);
  plan.ppBytes = model.pipelineMessageBytes(plan.b);
  plan.bucketBytes = spec.dpBucketBytes > 0 ? spec.dpBucketBytes
                                            : TransformerModel::defaultBucketBytes(plan.dp, spec.dtypeBytes);
  plan.paramsPerLayer = model.paramsPerLayer();
  plan.embeddingParams = model.embeddingParams();
  plan.outputParams = model.outputLayerParams();
  const int b = plan.b;
  plan.attnFwd = compute.computeTime(model.attentionForward(b));
  plan.mlpFwd = compute.computeTime(model.mlpForward(b));
  plan.attnBwd = compute.computeTime(TransformerModel::backwardOf(model.attentionForward(b)));
  plan.mlpBwd = compute.computeTime(TransformerModel::backwardOf(model.mlpForward(b)));
  for (const int n : plan.layersOfVirtual) {
    plan.chunkFwd.push_back(compute.computeTime(model.layerForward(b) * n));
    plan.chunkBwd.push_back(compute.computeTime(TransformerModel::backwardOf(model.layerForward(b)) * n));
  }
  plan.logitsFwd = compute.computeTime(model.logitsForward(b));
  plan.logitsBwd = compute.computeTime(TransformerModel::backwardOf(model.logitsForward(b)));
  // Lookup (vocab-parallel: every TP rank writes the full b*s*h output) and, in backward, the
  // scatter-add of the gradient rows: read + write of one activation.
  plan.embedding = compute.memoryTime(2.0 * static_cast<double>(model.activationBytes(b)));
  plan.model = &model;
  plan.compute = &compute;

  JobTrace trace;
  trace.name = name;
  trace.iterations = spec.iterations;
  const uint32_t tp = static_cast<uint32_t>(par.tp), dp = static_cast<uint32_t>(par.dp),
                 pp = static_cast<uint32_t>(par.pp);
  trace.ranks = tp * dp * pp;
  auto rankOf = [&](uint32_t t, uint32_t d, uint32_t p) { return t + tp * (d + dp * p); };

  Communicator tpComm{"tp", {}, {}, {}}, ppComm{"pp", {}, {}, {}}, dpComm{"dp", {}, {}, {}};
  for (uint32_t p = 0; p < pp; ++p) {
    for (uint32_t d = 0; d < dp; ++d) {
      std::vector<uint32_t> group;
      for (uint32_t t = 0; t < tp; ++t) group.push_back(rankOf(t, d, p));
      tpComm.groups.push_back(std::move(group));
    }
    for (uint32_t t = 0; t < tp; ++t) {
      std::vector<uint32_t> group;
      for (uint32_t d = 0; d < dp; ++d) group.push_back(rankOf(t, d, p));
      dpComm.groups.push_back(std::move(group));
    }
  }
  for (uint32_t d = 0; d < dp; ++d) {
    for (uint32_t t = 0; t < tp; ++t) {
      std::vector<uint32_t> group;
      for (uint32_t p = 0; p < pp; ++p) group.push_back(rankOf(t, d, p));
      ppComm.groups.push_back(std::move(group));
    }
  }
  trace.communicators = {std::move(tpComm), std::move(ppComm), std::move(dpComm)};
  plan.tpComm = 0;
  plan.ppComm = 1;
  plan.dpComm = 2;

  trace.programOfRank.resize(trace.ranks);
  for (uint32_t r = 0; r < trace.ranks; ++r) trace.programOfRank[r] = r / (tp * dp);
  for (int s = 0; s < par.pp; ++s) trace.programs.push_back(StageBuilder(plan, s).build());

  // The layers' compute of one micro-batch on the slowest stage (every stage's with uniform
  // stages).
  for (int s = 0; s < par.pp; ++s) {
    Time fwd, bwd;
    for (int c = 0; c < plan.v; ++c) {
      const size_t j = static_cast<size_t>(c * plan.pp + s);
      if (plan.stageGranularity) {
        fwd += plan.chunkFwd[j];
        bwd += plan.chunkBwd[j] + (plan.recompute ? plan.chunkFwd[j] : Time::zero());
      } else {
        const int n = plan.layersOfVirtual[j];
        fwd += (plan.attnFwd + plan.mlpFwd) * n;
        bwd +=
            (plan.attnBwd + plan.mlpBwd + (plan.recompute ? plan.attnFwd + plan.mlpFwd : Time::zero())) * n;
      }
    }
    if (s == 0 || fwd + bwd > trace.microbatchForward + trace.microbatchBackward) {
      trace.microbatchForward = fwd;
      trace.microbatchBackward = bwd;
    }
  }
  trace.microbatches = plan.m;
  trace.pipelineStages = par.pp;
  trace.generator = describe(spec, plan.m);
  trace.finalize(name);
  return trace;
}

}  // namespace fabricsim
