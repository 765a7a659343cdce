#include "sim/workload/StageProgram.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/workload/ComputeModel.h"
#include "sim/workload/GradientBuckets.h"
#include "sim/workload/TransformerModel.h"

namespace fabricsim {
namespace {

/// Builds the program of one pipeline stage.
class StageBuilder {
 public:
  StageBuilder(const TrainingPlan& plan, int stage) : plan_(plan), stage_(stage) {
    compute_ = prog_.stream("compute");
    recvFwd_ = prog_.stream("pp-recv-fwd");
    sendFwd_ = prog_.stream("pp-send-fwd");
    recvBwd_ = prog_.stream("pp-recv-bwd");
    sendBwd_ = prog_.stream("pp-send-bwd");
    dpStream_ = prog_.stream("dp");
    if (plan_.tpOverlap && plan_.tp > 1) tpStream_ = prog_.stream("tp-overlap");
    if (!plan_.tpOverlap && plan_.sp && plan_.attnBwdShares.columnGrad > Time::zero())
      tpAsyncStream_ = prog_.stream("tp-async");
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
    drainDeferredWgrads();
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

  /// A collective of `bytes` over communicator `comm`, labelled `label` (no stream, no deps).
  TraceOp collectiveOp(CollectiveOp kind, uint16_t comm, Bytes bytes, const char* label) {
    TraceOp op;
    op.type = OpType::Collective;
    op.collective = kind;
    op.comm = comm;
    op.bytes = bytes;
    op.label = prog_.label(label);
    return op;
  }

  void tpCollective(CollectiveOp kind, Bytes bytes, double smShare = -1.0, const char* label = nullptr) {
    if (plan_.tp == 1) return;
    TraceOp op = collectiveOp(kind, plan_.tpComm, bytes,
                              label != nullptr                      ? label
                              : kind == CollectiveOp::AllReduce     ? "tp-allreduce"
                              : kind == CollectiveOp::ReduceScatter ? "tp-reducescatter"
                                                                    : "tp-allgather");
    op.smShare = smShare;
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
  /// With TP overlap, `shares` are the compute shares its gather and reduce kernels take while
  /// they move data (TrainingPlan::TpShares); the GEMMs' SM margins are in `duration` already.
  uint32_t block(const char* label, Time duration, Bytes gatherBytes, Bytes reduceBytes, Bytes ringBytes,
                 TrainingPlan::TpShares shares) {
    if (!plan_.tpOverlap) {
      const bool ringHere = plan_.cp > 1 && ringBytes > 0;
      std::vector<uint32_t> inputs;  // what the ring's first step waits for (ring attention only)
      if (ringHere) {
        inputs = pending_;
        if (lastComputeValid_) inputs.push_back(lastCompute_);
      }
      const size_t before = prog_.ops.size();
      tpGather(gatherBytes);
      if (ringHere && prog_.ops.size() != before) inputs = {lastOp()};
      const std::vector<uint32_t> ringOps = ringHere ? ring(ringBytes, inputs) : std::vector<uint32_t>{};
      if (shares.regather && plan_.sp && shares.columnGrad > Time::zero())
        return asyncBackward(label, duration, gatherBytes, reduceBytes, ringOps, shares.columnGrad);
      const uint32_t op = computeOp(label, duration);
      pending_.insert(pending_.end(), ringOps.begin(), ringOps.end());
      tpReduce(reduceBytes);
      return op;
    }
    blockDeps_ = pending_;
    if (lastComputeValid_) blockDeps_.push_back(lastCompute_);
    tpGather(gatherBytes, shares.gather);
    // Backward with sequence parallelism: the block's sharded input gathered again for the
    // first GEMM's weight gradient (TE's bulk all-gather beside its data gradient).
    if (shares.regather && plan_.sp)
      tpCollective(CollectiveOp::AllGather, gatherBytes, shares.regatherShare, "tp-regather");
    // A chunked output projection (TpShares::reduceSplits): its last chunk's reduce-scatter
    // follows the GEMM; the rest overlaps it.
    const Bytes tail = shares.reduceSplits > 0 ? reduceBytes / shares.reduceSplits : 0;
    if (tail == 0 || reduceBytes > tail) tpReduce(reduceBytes - tail, shares.reduce);
    const std::vector<uint32_t> ringOps = ring(ringBytes, blockDeps_);
    overlapped_.insert(overlapped_.end(), ringOps.begin(), ringOps.end());
    const uint32_t op = computeOp(label, duration);
    if (tail > 0) {
      blockDeps_ = {op};
      tpReduce(tail, shares.reduce);
    }
    pending_ = std::move(overlapped_);
    overlapped_.clear();
    return op;
  }

  /// A backward block with sequence parallelism and no TP overlap, as Megatron's
  /// LinearWithGradAccumulationAndAsyncCommunication (and Transformer Engine's column-parallel
  /// modules) run its column-parallel GEMM: the block's compute up to that GEMM; then the
  /// re-gather of the GEMM's sharded input (`gatherBytes`, asynchronous, on the TP side stream)
  /// beside its data gradient; then the reduce-scatter of the data gradient (asynchronous) beside
  /// its weight gradient, which needs the gathered input. What follows waits for the
  /// reduce-scatter. Ring-attention messages finish before the column GEMM (attention's backward
  /// comes first). Returns the weight-gradient op.
  uint32_t asyncBackward(const char* label, Time duration, Bytes gatherBytes, Bytes reduceBytes,
                         const std::vector<uint32_t>& ringOps, Time columnGrad) {
    const Time before = std::max(Time::zero(), duration - columnGrad * 2);
    const uint32_t pre = computeOp(label, before);
    pending_.insert(pending_.end(), ringOps.begin(), ringOps.end());
    const uint32_t regather = tpAsync(CollectiveOp::AllGather, gatherBytes, "tp-regather", {pre});
    const uint32_t dgrad = computeOp(label, columnGrad);
    const uint32_t reduce =
        tpAsync(CollectiveOp::ReduceScatter, reduceBytes, "tp-reducescatter", {dgrad, regather});
    pending_ = {regather};
    const uint32_t wgrad = computeOp(label, columnGrad);
    pending_ = {reduce};
    return wgrad;
  }

  /// A TP collective on the side stream of Megatron's asynchronous backward communication.
  uint32_t tpAsync(CollectiveOp kind, Bytes bytes, const char* label, std::vector<uint32_t> deps) {
    TraceOp op = collectiveOp(kind, plan_.tpComm, bytes, label);
    op.stream = tpAsyncStream_;
    op.deps = std::move(deps);
    prog_.ops.push_back(std::move(op));
    return lastOp();
  }

  /// Megatron's "g" after a block in forward (and "f" in backward): all-reduce, or
  /// reduce-scatter with sequence parallelism.
  void tpReduce(Bytes bytes, double smShare = -1.0) {
    tpCollective(plan_.sp ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce, bytes, smShare);
  }
  /// With sequence parallelism, the all-gather before a block (identity without).
  void tpGather(Bytes bytes, double smShare = -1.0) {
    if (plan_.sp) tpCollective(CollectiveOp::AllGather, bytes, smShare);
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

  /// What a pass's output waits for: its last op and, with TP overlap or ring attention, the
  /// collectives and messages still pending beside it (the output is ready when they are done).
  std::vector<uint32_t> outputDeps() const {
    std::vector<uint32_t> deps = pending_;
    deps.push_back(lastOp());
    return deps;
  }

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

  /// Expert tensor parallelism: the TP group's all-gather of the tokens its ranks received
  /// (before the experts) or the reduce-scatter of the experts' partial outputs (after them),
  /// blocking; nccl-tests size: the whole gathered tensor, tp x one rank's dispatched tokens.
  void expertTp(CollectiveOp kind) {
    if (plan_.etp <= 1) return;
    emitCompute(collectiveOp(kind, plan_.tpComm, plan_.dispatchBytes * plan_.etp,
                             kind == CollectiveOp::AllGather ? "etp-allgather" : "etp-reducescatter"));
  }

  /// The MoE block of a layer in forward (also the recomputation): the router, the dispatch
  /// all-to-all, the experts this rank holds (with expert TP: between the TP group's gather of
  /// the received tokens and the reduce-scatter of their outputs), the combine all-to-all. With
  /// sequence parallelism the tokens stay sharded over TP, so no TP collective surrounds it.
  void moeForward(const char* label) {
    computeOp(label, plan_.routerFwd);
    expertAllToAll("ep-dispatch");
    expertTp(CollectiveOp::AllGather);
    computeOp(label, plan_.expertFwd);
    expertTp(CollectiveOp::ReduceScatter);
    expertAllToAll("ep-combine");
  }

  /// Its backward: the combine's gradient back to the experts, the conjugates of the expert-TP
  /// collectives around their backward, the dispatch's gradient back to the tokens, the
  /// router's backward. Returns the last op.
  uint32_t moeBackward() {
    expertAllToAll("ep-combine");
    expertTp(CollectiveOp::AllGather);
    computeOp("bwd", plan_.expertBwd);
    expertTp(CollectiveOp::ReduceScatter);
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
      block(label, plan_.chunkFwd[virtualStage(chunk)], total, total, plan_.ringBytes * layers(chunk),
            plan_.attnFwdShares);
      return;
    }
    for (int l = 0; l < layers(chunk); ++l) {
      block(label, plan_.attnFwd, s, s, plan_.ringBytes, plan_.attnFwdShares);
      if (plan_.moe)
        moeForward(label);
      else
        block(label, plan_.mlpFwd, s, s, 0, plan_.mlpFwdShares);
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
    if (!last) p2p(OpType::Send, sendFwd_, +1, outputDeps());
  }

  void backward(int chunk) {
    const bool first = firstVirtual(chunk), last = lastVirtual(chunk);
    const Bytes s = plan_.tpBytes;
    if (!last) pending_ = {p2p(OpType::Recv, recvBwd_, +1, {})};
    if (last && plan_.vocab) {
      // Deferred (the first deferredWgrads backwards): the data gradient only.
      const bool deferred = logitsBackwards_++ < plan_.deferredWgrads;
      logitsDone_ = computeOp("logits", deferred ? plan_.logitsBwd - plan_.logitsWgrad : plan_.logitsBwd);
      tpReduce(s);  // conjugate of the identity before the column-parallel output layer
    }
    std::vector<uint32_t>& done = layerDone_[static_cast<size_t>(chunk)];
    const Bytes ring = plan_.ringBytes * layers(chunk);
    if (plan_.stageGranularity && !plan_.tpOverlap && plan_.cp <= 1) {
      const int perLayer = plan_.recompute ? 4 : 2;
      const Bytes total = perLayer * s * layers(chunk);
      // With it, sequence parallelism's re-gathers (qkv's input, and fc1's unless the MLP is
      // experts) join the merged gather.
      const int regathers = plan_.attnBwdShares.regather ? (plan_.moe ? 1 : 2) : 0;
      tpGather(total + regathers * s * layers(chunk));
      if (plan_.recompute) computeOp("recompute", plan_.chunkFwd[virtualStage(chunk)]);
      const uint32_t op = computeOp("bwd", plan_.chunkBwd[virtualStage(chunk)]);
      tpReduce(total);
      std::fill(done.begin(), done.end(), op);
    } else if (plan_.stageGranularity) {
      const Bytes total = 2 * s * layers(chunk);
      if (plan_.recompute)
        block("recompute", plan_.chunkFwd[virtualStage(chunk)], total, total, ring, plan_.attnFwdShares);
      // Backward of ring attention passes K, V and their gradients: twice the forward's bytes.
      const uint32_t op =
          block("bwd", plan_.chunkBwd[virtualStage(chunk)], total, total, 2 * ring, plan_.attnBwdShares);
      std::fill(done.begin(), done.end(), op);
    } else {
      for (int l = layers(chunk) - 1; l >= 0; --l) {
        if (plan_.recompute) {
          block("recompute", plan_.attnFwd, s, s, plan_.ringBytes, plan_.attnFwdShares);
          if (plan_.moe)
            moeForward("recompute");
          else
            block("recompute", plan_.mlpFwd, s, s, 0, plan_.mlpFwdShares);
        }
        if (plan_.moe)
          moeBackward();
        else
          block("bwd", plan_.mlpBwd, s, s, 0, plan_.mlpBwdShares);
        done[static_cast<size_t>(l)] =
            block("bwd", plan_.attnBwd, s, s, 2 * plan_.ringBytes, plan_.attnBwdShares);
      }
    }
    if (first && plan_.vocab) {
      tpGather(s);  // conjugate of the embedding's reduce-scatter
      embeddingDone_ = computeOp("embedding", plan_.embedding);
    }
    if (!first) p2p(OpType::Send, sendBwd_, -1, outputDeps());
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
    sets_.push_back(
        {GradientBuckets(segments(false), plan_.bucketElements, plan_.dp * plan_.cp * plan_.ep > 1, plan_.v,
                         [tp](int64_t params) { return (params + tp - 1) / tp; }),
         plan_.dpComm, dpStream_, "dp"});
    if (plan_.expertParamsPerLayerRank > 0) {
      sets_.push_back({GradientBuckets(segments(true), plan_.bucketElements, plan_.dp * plan_.cp > 1, plan_.v,
                                       [](int64_t params) { return params; }),
                       plan_.edpComm, edpStream_, "edp"});
    }
    paramGatherOf_.assign(static_cast<size_t>(plan_.v), {});
    gatherWaited_.assign(static_cast<size_t>(plan_.v), 0);
  }

  /// Megatron's finish_embedding_wgrad_compute: after the last stage's last backward, the
  /// deferred output-layer weight gradients in one go (their gradient bucket waits for them).
  /// The all-gathers of their sequence-parallel inputs pipeline with the GEMMs and are left out.
  void drainDeferredWgrads() {
    if (plan_.deferredWgrads == 0 || stage_ != plan_.pp - 1 || !plan_.vocab) return;
    pending_.clear();
    logitsDone_ = computeOp("logits-wgrad", plan_.logitsWgrad * plan_.deferredWgrads);
    drained_ = true;
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
        std::vector<uint32_t> deps = {plan_.overlapGrad ? doneOf(b.segments()[b.lastSegment(k)])
                                                        : backwardDone};
        // A deferred output-layer gradient is final after the drain, after every layer's.
        if (drained_)
          for (size_t i = 0; i < b.segments().size(); ++i)
            if (b.segments()[i].layer == -1 && b.holds(k, i)) deps.push_back(logitsDone_);
        dpOps.push_back(dpCollective(set,
                                     plan_.distOpt ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce,
                                     b.elements(k) * plan_.gradBytes, std::move(deps)));
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
    if (plan_.distOpt)
      optimizerParams =
          (optimizerParams + plan_.dp * plan_.cp * plan_.ep - 1) / (plan_.dp * plan_.cp * plan_.ep);
    if (sets_.size() > 1) {
      const int64_t experts = sets_[1].buckets.totalParams();
      optimizerParams +=
          plan_.distOpt ? (experts + plan_.dp * plan_.cp - 1) / (plan_.dp * plan_.cp) : experts;
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
    const std::string name =
        std::string(set.prefix) + (kind == CollectiveOp::AllReduce       ? "-allreduce"
                                   : kind == CollectiveOp::ReduceScatter ? "-reducescatter"
                                                                         : "-allgather");
    TraceOp op = collectiveOp(kind, set.comm, bytes, name.c_str());
    op.stream = set.stream;
    op.deps = std::move(deps);
    prog_.ops.push_back(std::move(op));
    return lastOp();
  }

  const TrainingPlan& plan_;
  const int stage_;
  Program prog_;
  uint8_t compute_ = 0, recvFwd_ = 0, sendFwd_ = 0, recvBwd_ = 0, sendBwd_ = 0, dpStream_ = 0, tpStream_ = 0,
          tpAsyncStream_ = 0;
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
  int logitsBackwards_ = 0;  ///< backwards of the output layer so far (deferred wgrads)
  bool drained_ = false;     ///< the deferred wgrads were drained (logitsDone_ is the drain)
  uint32_t embeddingDone_ = 0;
};

}  // namespace

Program buildStageProgram(const TrainingPlan& plan, int stage) {
  return StageBuilder(plan, stage).build();
}

}  // namespace fabricsim
