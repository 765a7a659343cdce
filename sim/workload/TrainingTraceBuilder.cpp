#include "sim/workload/TrainingTraceBuilder.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "sim/core/Error.h"
#include "sim/workload/ComputeModel.h"
#include "sim/workload/GradientBuckets.h"
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
  bool vocab = false, tied = false, tpOverlap = false, overlapGrad = true, overlapParam = false;
  uint16_t tpComm = 0, ppComm = 0, dpComm = 0, embdComm = 0, cpComm = 0, epComm = 0, edpComm = 0;
  int cp = 1, ep = 1;
  bool moe = false;
  int64_t expertParamsPerLayerRank = 0;  ///< the experts of one layer this rank holds
  Bytes dispatchBytes = 0;               ///< one MoE all-to-all (dispatch or combine)
  Time routerFwd, routerBwd, expertFwd, expertBwd;
  Bytes ringBytes = 0;  ///< one ring-attention step forward (K and V of a chunk); backward moves 2x
  Bytes tpBytes = 0;        ///< one TP collective
  Bytes ppBytes = 0;        ///< one pipeline message per TP rank
  int64_t bucketElements = 0;  ///< DP bucket, in this rank's parameters
  int gradBytes = 2;         ///< bytes per gradient element in the DP reduction
  int paramBytes = 2;        ///< bytes per parameter element in the parameter all-gather
  double commSmShare = 0;    ///< GpuSpec::commSmShare: TP-overlapped blocks run slower by it
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
    if (plan_.tpOverlap && plan_.tp > 1) tpStream_ = prog_.stream("tp-overlap");
    if (plan_.cp > 1) {
      cpSend_ = prog_.stream("cp-send");
      cpRecv_ = prog_.stream("cp-recv");
    }
    if (plan_.expertParamsPerLayerRank > 0) edpStream_ = prog_.stream("edp");
    for (int c = 0; c < plan_.v; ++c) layerDone_.emplace_back(static_cast<size_t>(layers(c)), 0);
    planBuckets();
  }

  Program build() {
    if (plan_.overlapParam) paramGatherAhead();
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
    const bool compute = op.type == OpType::Compute;
    prog_.ops.push_back(std::move(op));
    if (compute) {
      lastCompute_ = lastOp();
      lastComputeValid_ = true;
    }
    return lastOp();
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
    if (!plan_.tpOverlap) {
      emitCompute(std::move(op));
      return;
    }
    // Overlapped (Transformer Engine userbuffers): on its own stream, beside the block's compute;
    // it starts with the block (the block's inputs are its inputs) and the next block waits for it.
    op.stream = tpStream_;
    op.deps = blockDeps_;
    prog_.ops.push_back(std::move(op));
    overlapped_.push_back(lastOp());
  }

  /// One compute block with the TP collectives around it: the all-gather before (sequence
  /// parallelism), the reduce after. Blocking: gather, compute, reduce in order. Overlapped:
  /// all three start together (the collectives on the TP stream, in order) and the next op waits
  /// for all of them.
  /// With context parallelism, the attention blocks pass `ringBytes` around the CP ring beside
  /// their compute (ring attention), and what follows waits for the ring too.
  uint32_t block(const char* label, Time duration, Bytes gatherBytes, Bytes reduceBytes, Bytes ringBytes = 0) {
    if (!plan_.tpOverlap) {
      std::vector<uint32_t> inputs = pending_;
      if (lastComputeValid_) inputs.push_back(lastCompute_);
      const size_t before = prog_.ops.size();
      tpGather(gatherBytes);
      if (prog_.ops.size() != before) inputs = {lastOp()};
      const std::vector<uint32_t> ringOps = ring(ringBytes, inputs);
      const uint32_t op = computeOp(label, duration);
      pending_.insert(pending_.end(), ringOps.begin(), ringOps.end());
      tpReduce(reduceBytes);
      return op;
    }
    blockDeps_ = pending_;
    if (lastComputeValid_) blockDeps_.push_back(lastCompute_);
    tpGather(gatherBytes);
    tpReduce(reduceBytes);
    const std::vector<uint32_t> ringOps = ring(ringBytes, blockDeps_);
    overlapped_.insert(overlapped_.end(), ringOps.begin(), ringOps.end());
    // The overlapped GEMMs run beside the communication kernel for their whole duration
    // (Transformer Engine gives them the SMs the userbuffers kernels leave): slower by the
    // GPU's communication share.
    const double keep = 1.0 - plan_.commSmShare;
    const uint32_t op =
        computeOp(label, Time::ps(std::llround(static_cast<double>(duration.picos()) / keep)));
    pending_ = std::move(overlapped_);
    overlapped_.clear();
    return op;
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

  /// Ring attention: cp - 1 steps, each sending `bytes` (a chunk's K and V; in backward also
  /// their gradients) to the next rank of the CP ring and receiving the previous rank's; a step
  /// forwards what the one before received, the first waits for `inputs`. Returns the last send
  /// and receive (empty without context parallelism or bytes).
  std::vector<uint32_t> ring(Bytes bytes, const std::vector<uint32_t>& inputs) {
    if (plan_.cp <= 1 || bytes <= 0) return {};
    std::vector<uint32_t> last;
    for (int step = 0; step + 1 < plan_.cp; ++step) {
      const std::vector<uint32_t> deps = last.empty() ? inputs : std::vector<uint32_t>{last[1]};
      const uint32_t send = cpMessage(OpType::Send, cpSend_, +1, bytes, deps);
      const uint32_t recv = cpMessage(OpType::Recv, cpRecv_, -1, bytes, {});
      last = {send, recv};
    }
    return last;
  }

  /// One all-to-all over the expert-parallel group, on the compute stream (it blocks the
  /// experts that need its tokens).
  void expertAllToAll(const char* label) {
    if (plan_.ep <= 1) return;
    TraceOp op;
    op.type = OpType::Collective;
    op.collective = CollectiveOp::AllToAll;
    op.comm = plan_.epComm;
    op.bytes = plan_.dispatchBytes;
    op.label = prog_.label(label);
    emitCompute(std::move(op));
  }

  /// The MoE block of a layer in forward (also the recomputation): the router, the dispatch
  /// all-to-all, the experts this rank holds, the combine all-to-all. With sequence parallelism
  /// the tokens stay sharded over TP, so no TP collective surrounds it.
  void moeForward(const char* label) {
    computeOp(label, plan_.routerFwd);
    expertAllToAll("ep-dispatch");
    computeOp(label, plan_.expertFwd);
    expertAllToAll("ep-combine");
  }

  /// Its backward: the combine's gradient back to the experts, their backward, the dispatch's
  /// gradient back to the tokens, the router's backward. Returns the last op.
  uint32_t moeBackward() {
    expertAllToAll("ep-combine");
    computeOp("bwd", plan_.expertBwd);
    expertAllToAll("ep-dispatch");
    return computeOp("bwd", plan_.routerBwd);
  }

  uint32_t cpMessage(OpType type, uint8_t stream, int32_t offset, Bytes bytes, std::vector<uint32_t> deps) {
    TraceOp op;
    op.type = type;
    op.stream = stream;
    op.comm = plan_.cpComm;
    op.peerOffset = offset;
    op.bytes = bytes;
    op.label = prog_.label(type == OpType::Send ? "cp-send" : "cp-recv");
    op.deps = std::move(deps);
    prog_.ops.push_back(std::move(op));
    return lastOp();
  }

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
      block(label, plan_.chunkFwd[virtualStage(chunk)], total, total, plan_.ringBytes * layers(chunk));
      return;
    }
    for (int l = 0; l < layers(chunk); ++l) {
      block(label, plan_.attnFwd, s, s, plan_.ringBytes);
      if (plan_.moe)
        moeForward(label);
      else
        block(label, plan_.mlpFwd, s, s);
    }
  }

  void forward(int chunk) {
    const bool first = firstVirtual(chunk), last = lastVirtual(chunk);
    if (!first) pending_ = {p2p(OpType::Recv, recvFwd_, -1, {})};
    if (plan_.overlapParam && !gatherWaited_[static_cast<size_t>(chunk)]) {
      // The first forward of a chunk waits for the all-gather of its parameters' bucket.
      gatherWaited_[static_cast<size_t>(chunk)] = 1;
      const auto& gathers = paramGatherOf_[static_cast<size_t>(chunk)];
      pending_.insert(pending_.end(), gathers.begin(), gathers.end());
    }
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
    const Bytes ring = plan_.ringBytes * layers(chunk);
    if (plan_.stageGranularity && !plan_.tpOverlap && plan_.cp <= 1) {
      const int perLayer = plan_.recompute ? 4 : 2;
      const Bytes total = perLayer * s * layers(chunk);
      tpGather(total);
      if (plan_.recompute) computeOp("recompute", plan_.chunkFwd[virtualStage(chunk)]);
      const uint32_t op = computeOp("bwd", plan_.chunkBwd[virtualStage(chunk)]);
      tpReduce(total);
      std::fill(done.begin(), done.end(), op);
    } else if (plan_.stageGranularity) {
      const Bytes total = 2 * s * layers(chunk);
      if (plan_.recompute) block("recompute", plan_.chunkFwd[virtualStage(chunk)], total, total, ring);
      // Backward of ring attention passes K, V and their gradients: twice the forward's bytes.
      const uint32_t op = block("bwd", plan_.chunkBwd[virtualStage(chunk)], total, total, 2 * ring);
      std::fill(done.begin(), done.end(), op);
    } else {
      for (int l = layers(chunk) - 1; l >= 0; --l) {
        if (plan_.recompute) {
          block("recompute", plan_.attnFwd, s, s, plan_.ringBytes);
          if (plan_.moe)
            moeForward("recompute");
          else
            block("recompute", plan_.mlpFwd, s, s);
        }
        if (plan_.moe)
          moeBackward();
        else
          block("bwd", plan_.mlpBwd, s, s);
        done[static_cast<size_t>(l)] = block("bwd", plan_.attnBwd, s, s, 2 * plan_.ringBytes);
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

  /// The gradient buffers this stage's ranks reduce: the dense parameters over communicator
  /// "dp", and with experts the expert parameters over "edp" (their own data-parallel group).
  struct BucketSet {
    GradientBuckets buckets;
    uint16_t comm;
    uint8_t stream;
    const char* prefix;  ///< label prefix: "dp" or "edp"
  };

  /// Segments in backward order: chunks from the last to the first, in each the output layer,
  /// the layers from the last to the first, the embedding (dense); the layers' experts (expert).
  std::vector<GradientBuckets::Segment> segments(bool expert) const {
    std::vector<GradientBuckets::Segment> out;
    for (int c = plan_.v - 1; c >= 0; --c) {
      if (!expert && lastVirtual(c) && plan_.vocab) out.push_back({plan_.outputParams, c, -1});
      for (int l = layers(c) - 1; l >= 0; --l)
        out.push_back({expert ? plan_.expertParamsPerLayerRank : plan_.paramsPerLayer, c, l});
      if (!expert && firstVirtual(c) && plan_.vocab) out.push_back({plan_.embeddingParams, c, -2});
    }
    return out;
  }

  void planBuckets() {
    const int tp = plan_.tp;
    sets_.push_back({GradientBuckets(segments(false), plan_.bucketElements, plan_.dp * plan_.cp * plan_.ep > 1,
                                     plan_.v, [tp](int64_t params) { return (params + tp - 1) / tp; }),
                     plan_.dpComm, dpStream_, "dp"});
    if (plan_.expertParamsPerLayerRank > 0) {
      sets_.push_back({GradientBuckets(segments(true), plan_.bucketElements, plan_.dp * plan_.cp > 1, plan_.v,
                                       [](int64_t params) { return params; }),
                       plan_.edpComm, edpStream_, "edp"});
    }
    paramGatherOf_.assign(static_cast<size_t>(plan_.v), {});
    gatherWaited_.assign(static_cast<size_t>(plan_.v), 0);
  }

  /// Megatron --overlap-param-gather: the previous step's parameter all-gathers, one per bucket
  /// in forward order (the last bucket first), issued at the start of the iteration; each
  /// chunk's first forward waits for the bucket holding its first parameters.
  void paramGatherAhead() {
    for (const BucketSet& set : sets_) {
      const GradientBuckets& b = set.buckets;
      std::vector<uint32_t> opOfBucket(b.buckets(), 0);
      for (size_t k = b.buckets(); k-- > 0;)
        opOfBucket[k] = dpCollective(set, CollectiveOp::AllGather, b.elements(k) * plan_.paramBytes, {});
      for (int c = 0; c < plan_.v; ++c) {
        const int k = b.chunkBucket(c);
        if (k >= 0) paramGatherOf_[static_cast<size_t>(c)].push_back(opOfBucket[static_cast<size_t>(k)]);
      }
    }
  }

  /// The op after which a segment's gradients are final.
  uint32_t doneOf(const GradientBuckets::Segment& seg) const {
    if (seg.layer == -1) return logitsDone_;
    if (seg.layer == -2) return embeddingDone_;
    return layerDone_[static_cast<size_t>(seg.chunk)][static_cast<size_t>(seg.layer)];
  }

  /// Gradient buckets in the order their gradients become final (or all after the backward),
  /// the tied embedding's gradient all-reduce, the optimizer step, and the distributed
  /// optimizer's parameter all-gather (here, unless gathered ahead of the next forward).
  void dataParallel() {
    const uint32_t backwardDone = lastCompute_;
    std::vector<uint32_t> dpOps;
    for (const BucketSet& set : sets_) {
      const GradientBuckets& b = set.buckets;
      for (size_t k = 0; k < b.buckets(); ++k) {
        const uint32_t dep = plan_.overlapGrad ? doneOf(b.segments()[b.lastSegment(k)]) : backwardDone;
        dpOps.push_back(dpCollective(set, plan_.distOpt ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce,
                                     b.elements(k) * plan_.gradBytes, {dep}));
      }
    }
    if (plan_.tied && plan_.pp > 1 && plan_.vocab && (stage_ == 0 || stage_ == plan_.pp - 1)) {
      // Megatron's finalize_model_grads: the shared embedding's gradient summed over the first
      // and the last stage (after the DP reduction of the buckets, before the optimizer).
      TraceOp op;
      op.type = OpType::Collective;
      op.stream = dpStream_;
      op.collective = CollectiveOp::AllReduce;
      op.comm = plan_.embdComm;
      op.bytes = plan_.model->gradientBytesPerRank(plan_.embeddingParams, plan_.gradBytes);
      op.label = prog_.label("embedding-allreduce");
      op.deps = {stage_ == 0 ? embeddingDone_ : logitsDone_};
      prog_.ops.push_back(std::move(op));
      dpOps.push_back(lastOp());
    }
    // Each rank's optimizer updates its dense parameters / tp and its experts, each divided
    // over its data-parallel group with the distributed optimizer.
    int64_t optimizerParams = (sets_[0].buckets.totalParams() + plan_.tp - 1) / plan_.tp;
    if (plan_.distOpt) optimizerParams = (optimizerParams + plan_.dp * plan_.cp * plan_.ep - 1) / (plan_.dp * plan_.cp * plan_.ep);
    if (sets_.size() > 1) {
      const int64_t experts = sets_[1].buckets.totalParams();
      optimizerParams += plan_.distOpt ? (experts + plan_.dp * plan_.cp - 1) / (plan_.dp * plan_.cp) : experts;
    }
    pending_ = dpOps;
    const uint32_t optimizer = computeOp("optimizer", plan_.compute->optimizerTime(optimizerParams));
    if (plan_.distOpt && !plan_.overlapParam) {
      for (const BucketSet& set : sets_)
        for (size_t k = 0; k < set.buckets.buckets(); ++k)
          dpCollective(set, CollectiveOp::AllGather, set.buckets.elements(k) * plan_.paramBytes, {optimizer});
    }
  }

  uint32_t dpCollective(const BucketSet& set, CollectiveOp kind, Bytes bytes, std::vector<uint32_t> deps) {
    TraceOp op;
    op.type = OpType::Collective;
    op.stream = set.stream;
    op.collective = kind;
    op.comm = set.comm;
    op.bytes = bytes;
    const std::string name = kind == CollectiveOp::AllReduce       ? "-allreduce"
                             : kind == CollectiveOp::ReduceScatter ? "-reducescatter"
                                                                   : "-allgather";
    op.label = prog_.label(set.prefix + name);
    op.deps = std::move(deps);
    prog_.ops.push_back(std::move(op));
    return lastOp();
  }

  const Plan& plan_;
  const int stage_;
  Program prog_;
  uint8_t compute_ = 0, recvFwd_ = 0, sendFwd_ = 0, recvBwd_ = 0, sendBwd_ = 0, dpStream_ = 0, tpStream_ = 0;
  uint8_t cpSend_ = 0, cpRecv_ = 0, edpStream_ = 0;
  std::vector<uint32_t> pending_;
  std::vector<uint32_t> blockDeps_;   ///< inputs of the block being emitted (TP overlap)
  std::vector<uint32_t> overlapped_;  ///< its TP collectives (TP overlap)
  uint32_t lastCompute_ = 0;
  bool lastComputeValid_ = false;
  std::vector<BucketSet> sets_;
  std::vector<std::vector<uint32_t>> paramGatherOf_;  ///< per chunk: the gathers its first forward waits for
  std::vector<uint8_t> gatherWaited_;
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
  positive(par.cp, "parallelism.cp");
  positive(par.ep, "parallelism.ep");
  need(static_cast<int64_t>(par.tp) * par.pp * par.dp * par.cp * par.ep <= UINT32_MAX, "parallelism",
       "tp * cp * ep * pp * dp is too large");
  need(model.experts >= 0 && model.moeFfnHidden >= 0 && model.capacityFactor >= 0, "model.experts",
       "expected experts, moe_ffn_hidden and capacity_factor >= 0");
  need(par.ep == 1 || (model.experts > 0 && model.experts % par.ep == 0), "parallelism.ep",
       "ep (" + std::to_string(par.ep) + ") must divide model.experts (" + std::to_string(model.experts) + ")");
  need(model.experts == 0 || (model.topK >= 1 && model.topK <= model.experts), "model.top_k",
       "top_k (" + std::to_string(model.topK) + ") must be in [1, experts (" + std::to_string(model.experts) + ")]");
  need(model.experts == 0 || par.tp == 1 || par.sequenceParallel, "parallelism.sequence_parallel",
       "a model with experts and tp > 1 needs sequence_parallel");
  need(model.experts == 0 || spec.tpGranularity == "layer", "tp_granularity",
       "tp_granularity: stage is not available with experts (their all-to-alls are per layer)");
  need(model.seqLen % par.cp == 0, "parallelism.cp",
       "cp (" + std::to_string(par.cp) + ") must divide the sequence length (" + std::to_string(model.seqLen) +
           "): each context-parallel rank holds seq_len / cp tokens");
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
  need(gpu.fp8GemmEfficiency > 0 && gpu.fp8GemmEfficiency <= 1, "gpu.efficiency.fp8_gemm",
       "expected a value in (0, 1]");
  need(gpu.memoryEfficiency > 0 && gpu.memoryEfficiency <= 1, "gpu.efficiency.memory", "expected a value in (0, 1]");
  need(gpu.peakFp8Flops > 0, "gpu.peak_fp8", "expected a positive FLOP rate");
  need(gpu.commSmShare >= 0 && gpu.commSmShare < 1, "gpu.comm_sm_share", "expected a value in [0, 1)");
  need(!par.tpCommOverlap || par.sequenceParallel, "parallelism.tp_comm_overlap",
       "tp_comm_overlap needs sequence_parallel: true (Megatron overlaps the sequence-parallel "
       "all-gather and reduce-scatter)");
  need(!par.overlapParamGather || par.distributedOptimizer, "parallelism.overlap_param_gather",
       "overlap_param_gather needs distributed_optimizer: true");
}

std::string describe(const TrainingSpec& spec, int m) {
  const ParallelismSpec& par = spec.parallelism;
  std::string model = spec.model.preset;
  if (model.empty()) {
    model = "custom-" + std::to_string(spec.model.layers) + "l-" + std::to_string(spec.model.hidden) + "h";
  }
  std::string out = "training " + model + " tp" + std::to_string(par.tp) + " pp" + std::to_string(par.pp) +
 (par.cp > 1 ? " cp" + std::to_string(par.cp) : std::string()) +
                    (par.ep > 1 ? " ep" + std::to_string(par.ep) : std::string()) + " dp" + std::to_string(par.dp) + " mb" + std::to_string(par.microBatch) + " gb" +
                    std::to_string(par.globalBatch) + " m" + std::to_string(m) + " " + par.schedule;
  if (par.schedule == "interleaved") out += " v" + std::to_string(par.virtualStages);
  if (par.sequenceParallel) out += " sp";
  if (par.distributedOptimizer) out += " distopt";
  if (par.recompute == "full") out += " recompute";
  if (spec.tpGranularity == "stage") out += " tp-per-stage";
  if (par.tpCommOverlap) out += " tp-overlap";
  if (!par.overlapGradReduce) out += " no-grad-overlap";
  if (par.overlapParamGather) out += " param-overlap";
  if (spec.model.tiedEmbeddings) out += " tied";
  if (spec.model.causal) out += " causal";
  if (spec.elementwise) out += " elementwise";
  if (spec.gradReduceBytes > 0) out += " grads-" + spec.gradReduceDtype;
  if (spec.dtype == "fp8") out += " fp8";
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
  const TransformerModel model(spec.model, spec.dtypeBytes, par.tp, par.sequenceParallel, par.cp);
  const ComputeModel compute(spec.gpu, spec.dtype == "fp8");

  Plan plan;
  plan.tp = par.tp;
  plan.cp = par.cp;
  plan.ep = par.ep;
  plan.moe = model.moe();
  plan.expertParamsPerLayerRank = model.expertParamsPerLayer() / par.ep;
  plan.dispatchBytes = model.dispatchBytes(par.microBatch);
  plan.ringBytes = par.cp > 1 ? model.ringKvBytes(par.microBatch) : 0;
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
  plan.tied = spec.model.tiedEmbeddings;
  plan.tpOverlap = par.tpCommOverlap && par.tp > 1;
  plan.commSmShare = spec.gpu.commSmShare;
  plan.overlapGrad = par.overlapGradReduce;
  plan.overlapParam = par.overlapParamGather && par.distributedOptimizer;
  plan.gradBytes = spec.gradReduceBytes > 0 ? spec.gradReduceBytes : spec.dtypeBytes;
  plan.paramBytes = spec.dtypeBytes;
  // Megatron's bucket counts parameters; a dp_bucket in bytes is of the reduced gradients.
  plan.bucketElements =
      std::max<int64_t>(1, spec.dpBucketBytes > 0 ? spec.dpBucketBytes / plan.gradBytes
                                                  : TransformerModel::defaultBucketBytes(plan.dp, 1));
  plan.paramsPerLayer = model.paramsPerLayer();
  plan.embeddingParams = model.embeddingParams();
  plan.outputParams = model.outputLayerParams();
  const int b = plan.b;
  // Memory-bound kernels of each block (0 when not modelled).
  const double attnMem = spec.elementwise ? model.attentionElementwiseBytes(b) : 0.0;
  const double mlpMem = spec.elementwise ? model.mlpElementwiseBytes(b) : 0.0;
  plan.attnFwd = compute.computeTime(model.attentionForward(b), attnMem);
  plan.mlpFwd = compute.computeTime(model.mlpForward(b), mlpMem);
  plan.attnBwd = compute.computeTime(TransformerModel::backwardOf(model.attentionForward(b)),
                                     TransformerModel::backwardElementwiseBytes(attnMem));
  plan.mlpBwd = compute.computeTime(TransformerModel::backwardOf(model.mlpForward(b)),
                                    TransformerModel::backwardElementwiseBytes(mlpMem));
  for (const int n : plan.layersOfVirtual) {
    plan.chunkFwd.push_back(compute.computeTime(model.layerForward(b) * n, (attnMem + mlpMem) * n));
    plan.chunkBwd.push_back(compute.computeTime(TransformerModel::backwardOf(model.layerForward(b)) * n,
                                                TransformerModel::backwardElementwiseBytes(attnMem + mlpMem) * n));
  }
  if (plan.moe) {
    const double moeMem = spec.elementwise ? model.moeElementwiseBytes(b) : 0.0;
    plan.routerFwd = compute.computeTime(model.routerForward(b));
    plan.routerBwd = compute.computeTime(TransformerModel::backwardOf(model.routerForward(b)));
    plan.expertFwd = compute.computeTime(model.expertForward(b), moeMem);
    plan.expertBwd = compute.computeTime(TransformerModel::backwardOf(model.expertForward(b)),
                                         TransformerModel::backwardElementwiseBytes(moeMem));
    plan.mlpFwd = plan.routerFwd + plan.expertFwd;  // for the analytic per-micro-batch figures
    plan.mlpBwd = plan.routerBwd + plan.expertBwd;
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
                 pp = static_cast<uint32_t>(par.pp), cp = static_cast<uint32_t>(par.cp),
                 ep = static_cast<uint32_t>(par.ep);
  trace.ranks = tp * cp * ep * dp * pp;
  // Megatron's order tp-cp-ep-dp-pp: rank = tp_idx + tp (cp_idx + cp (ep_idx + ep (dp_idx + dp pp_idx))).
  auto rankOf = [&](uint32_t t, uint32_t c, uint32_t e, uint32_t d, uint32_t p) {
    return t + tp * (c + cp * (e + ep * (d + dp * p)));
  };
  Communicator tpComm{"tp", {}, {}, {}}, ppComm{"pp", {}, {}, {}}, dpComm{"dp", {}, {}, {}};
  Communicator cpComm{"cp", {}, {}, {}}, epComm{"ep", {}, {}, {}}, edpComm{"edp", {}, {}, {}};
  for (uint32_t p = 0; p < pp; ++p) {
    for (uint32_t d = 0; d < dp; ++d)
      for (uint32_t e = 0; e < ep; ++e)
        for (uint32_t c = 0; c < cp; ++c) {
          std::vector<uint32_t> group;
          for (uint32_t t = 0; t < tp; ++t) group.push_back(rankOf(t, c, e, d, p));
          tpComm.groups.push_back(std::move(group));
        }
    // Dense gradients are reduced over the data-, expert- and context-parallel ranks together
    // (Megatron's data-parallel group with context parallelism); the experts' over dp x cp.
    for (uint32_t t = 0; t < tp; ++t) {
      std::vector<uint32_t> group;
      for (uint32_t d = 0; d < dp; ++d)
        for (uint32_t e = 0; e < ep; ++e)
          for (uint32_t c = 0; c < cp; ++c) group.push_back(rankOf(t, c, e, d, p));
      dpComm.groups.push_back(std::move(group));
      for (uint32_t e = 0; e < ep; ++e) {
        std::vector<uint32_t> expertGroup;
        for (uint32_t d = 0; d < dp; ++d)
          for (uint32_t c = 0; c < cp; ++c) expertGroup.push_back(rankOf(t, c, e, d, p));
        edpComm.groups.push_back(std::move(expertGroup));
      }
    }
    for (uint32_t d = 0; d < dp; ++d)
      for (uint32_t e = 0; e < ep; ++e)
        for (uint32_t t = 0; t < tp; ++t) {
          std::vector<uint32_t> group;
          for (uint32_t c = 0; c < cp; ++c) group.push_back(rankOf(t, c, e, d, p));
          cpComm.groups.push_back(std::move(group));
        }
    for (uint32_t d = 0; d < dp; ++d)
      for (uint32_t c = 0; c < cp; ++c)
        for (uint32_t t = 0; t < tp; ++t) {
          std::vector<uint32_t> group;
          for (uint32_t e = 0; e < ep; ++e) group.push_back(rankOf(t, c, e, d, p));
          epComm.groups.push_back(std::move(group));
        }
  }
  for (uint32_t d = 0; d < dp; ++d)
    for (uint32_t e = 0; e < ep; ++e)
      for (uint32_t c = 0; c < cp; ++c)
        for (uint32_t t = 0; t < tp; ++t) {
          std::vector<uint32_t> group;
          for (uint32_t p = 0; p < pp; ++p) group.push_back(rankOf(t, c, e, d, p));
          ppComm.groups.push_back(std::move(group));
        }
  trace.communicators = {std::move(tpComm), std::move(ppComm), std::move(dpComm)};
  plan.tpComm = 0;
  plan.ppComm = 1;
  plan.dpComm = 2;
  if (plan.tied && pp > 1 && plan.vocab) {
    // Megatron's embedding group: the first and the last stage's ranks of one (tp, cp, ep, dp)
    // index; the other stages' ranks are alone in theirs (every rank is in one group) and never
    // use it.
    Communicator embd{"embd", {}, {}, {}};
    for (uint32_t d = 0; d < dp; ++d)
      for (uint32_t e = 0; e < ep; ++e)
        for (uint32_t c = 0; c < cp; ++c)
          for (uint32_t t = 0; t < tp; ++t) {
            embd.groups.push_back({rankOf(t, c, e, d, 0), rankOf(t, c, e, d, pp - 1)});
            for (uint32_t p = 1; p + 1 < pp; ++p) embd.groups.push_back({rankOf(t, c, e, d, p)});
          }
    plan.embdComm = static_cast<uint16_t>(trace.communicators.size());
    trace.communicators.push_back(std::move(embd));
  }
  if (cp > 1) {
    plan.cpComm = static_cast<uint16_t>(trace.communicators.size());
    trace.communicators.push_back(std::move(cpComm));
  }
  if (plan.moe) {
    plan.epComm = static_cast<uint16_t>(trace.communicators.size());
    trace.communicators.push_back(std::move(epComm));
    plan.edpComm = static_cast<uint16_t>(trace.communicators.size());
    trace.communicators.push_back(std::move(edpComm));
  }
  trace.commSmShare = spec.gpu.commSmShare;

  trace.programOfRank.resize(trace.ranks);
  for (uint32_t r = 0; r < trace.ranks; ++r) trace.programOfRank[r] = r / (tp * cp * ep * dp);
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
