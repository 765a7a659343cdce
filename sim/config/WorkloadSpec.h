// WorkloadSpec: the value-type description of one workload read from a workload YAML file.
//
// Models: the four kinds of DESIGN.md section 5:
//   pattern    synthetic traffic (permutation, incast, all-to-all) with its message size, start
//              time and repetitions;
//   collective an nccl-tests-style sweep of one collective over a range of sizes;
//   training   a Megatron-style transformer trained with tensor, pipeline and data parallelism;
//   trace      a recorded per-rank program (see sim/workload/TraceFile.h) replayed on the fabric.
// Every kind that runs on ranks shares PlacementSpec (which GPUs, in which order) and
// CollectiveTuning (algorithm choice, channels, per-step latency, protocol efficiency).
// Leaves out: behaviour; sim/workload turns a spec into transfers on a Fabric.
// Units: Bytes, Time (ps), FLOP/s as double, efficiencies as fractions in (0, 1].
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "sim/core/Time.h"
#include "sim/core/Units.h"

namespace fabricsim {

enum class PatternKind { Permutation, Incast, AllToAll };

struct PatternSpec {
  PatternKind pattern = PatternKind::Permutation;
  Bytes messageSize = 1024 * 1024;
  Time start = Time::zero();
  /// Each sender sends its message this many times, one after another (closed loop: the next
  /// starts when the previous one has been delivered, plus `gap`).
  int repetitions = 1;
  Time gap = Time::zero();
  int incastSenders = 0;        ///< incast: number of senders (0 = every other GPU)
  uint32_t incastReceiver = 0;  ///< incast: the receiving GPU rank
  int trafficClass = 0;
  /// GPUs the pattern runs on: [firstGpu, firstGpu + gpus). gpus = 0 means all GPUs.
  uint32_t firstGpu = 0;
  uint32_t gpus = 0;
  /// Queue pairs (UDP source-port entropy values) per sender/receiver pair; flows round-robin
  /// their repetitions over them.
  int qpsPerPair = 1;
};

// ---------------------------------------------------------------------------------------------
// Collectives

enum class CollectiveOp { AllReduce, AllGather, ReduceScatter, AllToAll, Broadcast, SendRecv };
/// Auto picks per call what NCCL's tuner picks (CollectiveTuner: NcclCostModel on the call's
/// shape, among ring, tree, nvls on one host and nvls_tree across uniform hosts, the NVLS ones
/// only with CollectiveTuning::nvls); hierarchical, which NCCL does not have, only when asked for.
/// All-to-all and send/recv have one algorithm each: direct.
/// Nvls: all-reduce inside one host through the NVSwitch (NVLink SHARP: the switch reduces and
/// multicasts). NvlsTree: NVLS inside each host pipelined with an all-reduce across hosts.
enum class CollectiveAlgorithm { Auto, Ring, Tree, Hierarchical, Direct, Nvls, NvlsTree, Pat };

/// NCCL's protocols. Simple: the tuning's protocolEfficiency and step latencies; LL and LL128
/// move 8-byte lines with 4 bytes of data (efficiency 0.5) and 128-byte lines with 120 bytes
/// (NCCL counts 0.92 for them and their flags), with lower per-hop latencies (CollectiveTuning::llLatencyScale / ll128LatencyScale
/// and their network counterparts) and their own throughput ceilings (llMaxBandwidth,
/// ll128ChannelBandwidthGBps). Auto: the protocol NCCL's own tuner picks (NcclCostModel).
enum class CollectiveProtocol : uint8_t { Auto, LL, LL128, Simple };

/// How collectives are decomposed and timed. Defaults are NCCL-like; a calibration file may
/// replace any of them.
enum class RingModel : uint8_t { Auto, Steps, Pipelined };

struct CollectiveTuning {
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::Auto;
  /// Under Auto, the algorithms NCCL's tuner may pick (NCCL_ALGO semantics, e.g. "^NVLS" or
  /// "Ring,Tree"), bits in NCCL's order: 0 Tree, 1 Ring, 2 CollNetDirect, 3 CollNetChain, 4 NVLS,
  /// 5 NVLSTree, 6 PAT. A call none of them can run is an InputError, as NCCL fails it.
  uint8_t algorithmsAllowed = 0x7f;
  /// Parallel rings / trees (NCCL channels); each uses its own queue pair, so ECMP may put
  /// them on different paths. Inter-host collectives use `channels`, intra-host ones
  /// `nvlinkChannels`.
  int channels = 4;
  int nvlinkChannels = 1;
  /// Channels every ring, tree and PAT call runs on, as NCCL ran it (the `channel{Lo..Hi}` of its
  /// NCCL_DEBUG=INFO tuning line; calibrate pins it per size where a measurement recorded it),
  /// at most the call's bytes. 0: NCCL's rule, `channels` lowered for small calls
  /// (CollectiveTuner::ncclChoice).
  int callChannels = 0;
  /// Fixed software latency added to every step (one send of one chunk by one rank), on top of
  /// the fabric's own time: launch, FIFO handshakes, proxy thread. Separate for steps that stay
  /// inside a host (NVLink) and steps that cross the network.
  Time stepLatencyNvlink = Time::ns(600);
  Time stepLatencyNetwork = Time::ns(2700);
  /// Fraction of the wire payload that is user data under the protocol (Simple ~1.0,
  /// LL128 120/128, LL 0.5): a step of b user bytes moves ceil(b / efficiency) bytes.
  double protocolEfficiency = 1.0;
  /// Pipelining unit of tree and broadcast: data are split into chunks of at most this size
  /// that flow down/up the tree one after another.
  Bytes chunkSize = 1024 * 1024;
  int trafficClass = 0;
  /// How a ring is handed to the fabric: `Steps` sends each of its 2(N-1) (or N-1) steps as its
  /// own transfer, waiting for the data it forwards; `Pipelined` sends each ring edge's whole
  /// share as one transfer (the steady state of a pipelined ring: every edge busy at once) and
  /// adds the steps' latencies (step latency plus the path's fixed latency, per step) before it.
  /// Both give the closed form on an idle fabric; Pipelined issues N C transfers per ring
  /// instead of 2(N-1) N C, which is what lets 100K-GPU jobs run. `Auto`: Pipelined on the flow
  /// backend, Steps on the packet backend. Trees follow the same setting: Steps sends each
  /// chunk (NCCL's tree chunk), Pipelined each tree edge's whole share at once after its first
  /// chunk's latency (TreeBuilder::buildPipelined).
  RingModel ringModel = RingModel::Auto;
  /// Protocol of every collective (Simple: as before protocols existed) or Auto (per call).
  CollectiveProtocol protocol = CollectiveProtocol::Simple;
  /// Under Auto, the protocols NCCL's tuner may pick (NCCL_PROTO semantics, e.g. "^LL128" on a
  /// host whose NICs are not under its GPUs' PCIe switches, where NCCL disables LL128): bit 0
  /// LL, bit 1 LL128, bit 2 Simple.
  uint8_t protocolsAllowed = 0b111;
  /// Per-hop latency of LL and LL128 as a fraction of Simple's, on NVLink hops and on network
  /// hops: of the whole hop (the step latency above plus the path's own latency), as NCCL's
  /// hardware latencies are whole hops; the step is that less the path, at least zero.
  /// Defaults: the ratios of NCCL 2.30.7's ring hardware latencies (src/graph/tuning.cc hwLat
  /// Ring: NVLink LL 0.6 / LL128 1.9 / Simple 3.4 us; network 2.7 / 4.0 / 14.0 us); a tree's
  /// hops take NCCL's tree figures relative to these (CollectiveEngine).
  double llLatencyScale = 0.6 / 3.4;
  double ll128LatencyScale = 1.9 / 3.4;
  double llNetworkLatencyScale = 2.7 / 14.0;
  double ll128NetworkLatencyScale = 4.0 / 14.0;
  /// Throughput ceilings of the low-latency protocols, as user data (GB/s, 10^9 B/s). LL: a
  /// rank's data rate over all its channels (its 8-byte stores of 4 data bytes and a flag are
  /// polled by the receiver; across hosts they are staged through host memory, so the CPU's
  /// memory system bounds them): NCCL 2.30.7's llMaxBw, Hopper 141 GB/s on one host and, across
  /// hosts, by CPU (Intel x86: 39 on two hosts, 20.4 beyond); <= 0 takes those. LL128: one
  /// channel's data rate (NCCL's perChMaxRingLL128Bw, Hopper 36.7 GB/s; trees on more than two
  /// hosts perChMaxTreeLL128Bw 29).
  double llMaxBandwidthGBps = 0;
  double ll128ChannelBandwidthGBps = 36.7;
  /// One channel's Simple data rate in a ring across hosts (GB/s of user data, every lane of the
  /// channel): a channel is one thread block on one SM, which copies each step's data through
  /// the connection's FIFO and drives its proxy, and that rate is below a 400 Gb/s NIC's on
  /// Hopper, so NCCL runs two or more channels per NIC there. With it, a channel that is alone
  /// on its link while the others wait out their step latency cannot take the whole link, so
  /// channels hide less of each other's latency. 0: not modelled (the default; the H100
  /// calibration sets it, validation/cases/h100-nccl-tuning.yaml, with its sources).
  double simpleChannelBandwidthGBps = 0;
  /// The LL ceiling for a collective over `hosts` hosts (llMaxBandwidthGBps, or NCCL's).
  double llMaxBandwidth(uint32_t hosts) const {
    if (llMaxBandwidthGBps > 0) return llMaxBandwidthGBps;
    return hosts <= 1 ? 141.0 : hosts == 2 ? 39.0 : 20.4;
  }
  /// Per-step cost of posting a ring's network operation (NCCL's net overhead: 1 us on Intel
  /// x86, 2 us on AMD, x3 under Simple; src/graph/tuning.cc getNetOverhead): a ring that
  /// crosses hosts takes at least this per step, NVLink steps included ("inter-node rings still
  /// have to launch nsteps x net overhead"). Zero: not modelled (the default).
  Time netOverhead = Time::zero();
  /// Hosts' NVSwitches reduce in the switch (NVLink SHARP, HGX H100/H200 and later): enables the
  /// nvls and nvls_tree all-reduce (auto considers them; an explicit request without it is an error).
  bool nvls = false;
  /// Fraction of the NVLink bandwidth an NVLS all-reduce reaches (NCCL 2.30.7's tuner uses 0.85
  /// for Hopper, nvlsEfficiency in src/graph/tuning.cc).
  double nvlsEfficiency = 0.85;
  /// Factor on nvlsEfficiency for the NVLS part of nvls_tree (it shares the GPUs with the
  /// inter-host transfers; measured H100 two-host tables run it about 9% slower than one host).
  double nvlsTreeEfficiency = 1.0;
  /// Fixed latency of an NVLS all-reduce (launch, switch multicast set-up, the barrier between
  /// reduce and multicast); NCCL 2.30.7's tuner: 25 us (hwLat NVLink NVLS Simple).
  Time nvlsLatency = Time::us(25);
  /// Step latency of an inter-host hop of the NVLS tree (NCCL's NVLSTree across nodes: the
  /// proxy's post and completion, the NVLS sync at both ends), apart from the ring's and
  /// tree's network step (NCCL's tuner: hwLat NET NVLSTree 20.9 us against Ring / Tree Simple
  /// 14 us, path included). Negative: the same as stepLatencyNetwork.
  Time nvlsTreeHopLatency = Time::ps(-1);
  Time nvlsTreeHop() const { return nvlsTreeHopLatency < Time::zero() ? stepLatencyNetwork : nvlsTreeHopLatency; }
  /// Data in flight in an NVLS pipeline (NCCL: NVLS channels x chunk; 16 x 1 MiB here): before
  /// it runs at full rate the first min(S, this) passes the reduce before the multicast and
  /// the inter-host part may start (the pipeline's fill).
  Bytes nvlsPipeline = 16 * 1024 * 1024;
};

/// kind: collective (nccl-tests emulation).
struct CollectiveSweepSpec {
  CollectiveOp op = CollectiveOp::AllReduce;
  Bytes minBytes = 1024 * 1024;
  Bytes maxBytes = 1024 * 1024 * 1024;
  double factor = 2;               ///< size multiplier between rows (nccl-tests -f)
  Bytes stepBytes = 0;             ///< when > 0, add this instead of multiplying (nccl-tests -i)
  int warmup = 1;                  ///< nccl-tests -w
  int iterations = 5;              ///< nccl-tests -n; the reported time is their mean
  std::string dataType = "float";  ///< float | half | bfloat16 | double | int8 | ... (element size)
  int elementBytes = 4;
  uint32_t root = 0;  ///< broadcast root rank
  /// ranks = hosts * gpusPerHost when `hosts` is given, else `ranks` (0 = every GPU of the fabric)
  uint32_t ranks = 0;
  uint32_t hosts = 0;
  int gpusPerHost = 0;  ///< 0 = the topology's
};

// ---------------------------------------------------------------------------------------------
// Training

struct ModelSpec {
  std::string preset;  ///< gpt3-175b | llama3-70b | llama3-405b | "" (custom)
  int layers = 0;
  int hidden = 0;
  int ffnHidden = 0;  ///< 0 = 4 * hidden
  int heads = 0;
  int kvHeads = 0;  ///< 0 = heads (multi-head attention); < heads = grouped-query attention
  int seqLen = 0;
  int vocab = 0;          ///< 0 = no embedding and output layer modelled
  bool gatedMlp = false;  ///< SwiGLU (three FFN matrices) instead of GELU (two)
  /// Causal (decoder) attention: the kernels skip the masked half of the s x s products, so
  /// attention FLOPs are halved (FlashAttention's causal kernels). false counts the full square.
  /// Default true: Megatron's GPT models are causal decoders.
  bool causal = true;
  /// The output layer shares the input embedding's weights (Megatron's default; GPT-3), so
  /// with pp > 1 the first and last stage all-reduce that weight's gradient every step.
  /// Llama-3 and Mixtral untie them (their presets say so).
  bool tiedEmbeddings = true;
  /// Mixture of experts: every layer's MLP is `experts` experts of ffn hidden `moeFfnHidden`
  /// (0: ffnHidden), each token routed to `topK` of them; capacityFactor > 0 pads every expert
  /// to capacityFactor x its even share of tokens (Megatron's drop-and-pad), 0 is dropless
  /// (the even share on average). 0 experts: a dense MLP.
  int experts = 0;
  int topK = 0;
  int moeFfnHidden = 0;
  double capacityFactor = 0;
};

struct GpuSpec {
  std::string preset;         ///< h100-sxm | h200-sxm | "" (custom)
  double peakFlops = 989e12;  ///< dense bf16 FLOP/s
  double hbmBytesPerSecond = 3.35e12;
  /// Fraction of peak reached by each kind of compute (override by `efficiency:` or a
  /// calibration file). gemm: the layers' matrix multiplies; attention: the s x s score and
  /// value products (FlashAttention).
  double gemmEfficiency = 0.6;
  double attentionEfficiency = 0.45;
  /// Dense fp8 tensor-core peak (FLOP/s; H100/H200 SXM 1979e12): fp8 GEMMs run at this times
  /// fp8GemmEfficiency. Attention stays bf16 (Transformer Engine keeps it there).
  double peakFp8Flops = 1979e12;
  double fp8GemmEfficiency = 0.6;
  /// Fraction of hbmBytesPerSecond that memory-bound kernels (layer norm, activation, dropout,
  /// residual add, the optimizer) reach; 1 = the datasheet rate.
  double memoryEfficiency = 1.0;
  /// Fraction of the rates above that a tensor-core kernel (a GEMM, fp8 or not, and fused
  /// attention) keeps inside a training step, where the efficiencies were timed alone on an idle
  /// GPU (the gpu/ harness): the power-capped clock of a GPU busy for seconds and the contention
  /// of the kernels around it. Memory-bound kernels are not scaled (HBM keeps its clock).
  /// 1 = as timed alone; fitted by validation/training/fit_in_step_rate.py on published step times.
  double inStepRate = 1.0;
  /// Fraction of the compute throughput lost while a communication kernel runs on the same GPU
  /// (NCCL's and Transformer Engine's communication kernels occupy SMs): a compute op that
  /// starts with communication of its rank in flight takes duration / (1 - commSmShare).
  /// 0: not modelled.
  double commSmShare = 0.0;
  /// Streaming multiprocessors (H100 / H200 SXM: 132): Transformer Engine's overlapped GEMMs
  /// give up TpOverlapSlot::numSm of them (TpOverlapConfig).
  int sms = 132;
};

/// How Transformer Engine overlaps one GEMM with its tensor-parallel collective (a
/// userbuffers "ub" config entry, Megatron's tp_comm_overlap_cfg).
/// ring_exchange: the GEMM runs in tp chunks while copy engines pass the next chunk (no SMs
/// move data); pipeline: the GEMM runs in chunks while a reduce-scatter kernel on numSm SMs
/// reduces the finished ones; bulk: one collective kernel on numSm SMs beside the whole GEMM.
/// smMargin: the GEMM is launched on sms - numSm SMs for its whole duration (so the
/// communication never competes with it afterwards); without it, an SM-based kernel (pipeline,
/// bulk) competes with the GEMM while it moves data.
struct TpOverlapSlot {
  std::string method;  ///< ring_exchange | pipeline | bulk
  int numSm = 1;
  bool smMargin = false;
  /// Chunks of a pipelined GEMM (TE's num_splits; default 4). Ring exchange always runs tp
  /// chunks (TE ignores the key there); bulk does not chunk.
  int numSplits = 4;
};

/// Transformer Engine's ten overlap slots of a layer (names as TE's ub config). Defaults are
/// TE's own (transformer_engine/pytorch/module/base.py, initialize_ub): ring_exchange with 1
/// SM and no margin for qkv_fprop, fc1_fprop, proj_dgrad, fc2_dgrad; pipeline for proj_fprop
/// and fc2_fprop and bulk for the four backward slots, each with 16 SMs and the margin set.
/// In a forward block the gather is the *_fprop AG slot and the reduce-scatter the output
/// projection's; in backward the gradient's gather is proj_dgrad / fc2_dgrad and the
/// input-gradient reduce-scatter runs beside the weight gradient (qkv_wgrad / fc1_wgrad).
struct TpOverlapConfig {
  TpOverlapSlot qkvFprop{"ring_exchange", 1, false}, fc1Fprop{"ring_exchange", 1, false};
  TpOverlapSlot projDgrad{"ring_exchange", 1, false}, fc2Dgrad{"ring_exchange", 1, false};
  TpOverlapSlot projFprop{"pipeline", 16, true}, fc2Fprop{"pipeline", 16, true};
  TpOverlapSlot qkvDgrad{"bulk", 16, true}, qkvWgrad{"bulk", 16, true};
  TpOverlapSlot fc1Dgrad{"bulk", 16, true}, fc1Wgrad{"bulk", 16, true};

  /// The ten slots under TE's names (the YAML keys).
  template <typename Self>
  static auto slotsOf(Self& c) {
    using Slot = std::conditional_t<std::is_const_v<Self>, const TpOverlapSlot, TpOverlapSlot>;
    return std::array<std::pair<const char*, Slot*>, 10>{{{"qkv_fprop", &c.qkvFprop},
                                                          {"proj_fprop", &c.projFprop},
                                                          {"fc1_fprop", &c.fc1Fprop},
                                                          {"fc2_fprop", &c.fc2Fprop},
                                                          {"qkv_dgrad", &c.qkvDgrad},
                                                          {"qkv_wgrad", &c.qkvWgrad},
                                                          {"proj_dgrad", &c.projDgrad},
                                                          {"fc1_dgrad", &c.fc1Dgrad},
                                                          {"fc1_wgrad", &c.fc1Wgrad},
                                                          {"fc2_dgrad", &c.fc2Dgrad}}};
  }
  auto slots() { return slotsOf(*this); }
  auto slots() const { return slotsOf(*this); }
};

struct ParallelismSpec {
  int tp = 1;
  int pp = 1;
  int dp = 1;
  /// Context parallelism: each rank holds s/cp of every sequence; attention is ring attention
  /// (K and V passed around the CP ring beside the attention compute); gradients are reduced
  /// over the dp * cp ranks. Ranks: tp * cp * dp * pp.
  int cp = 1;
  /// Expert parallelism (models with experts): each expert layer's experts split over `ep`
  /// ranks, tokens dispatched to and combined from them by all-to-all. Ranks: tp * cp * ep *
  /// dp * pp in Megatron's order tp-cp-ep-dp-pp; the dense parameters are replicated over
  /// ep * dp * cp ranks, the experts over dp * cp. Each expert is whole on its rank (expert
  /// tensor parallelism 1).
  int ep = 1;
  /// Expert tensor parallelism (Megatron --expert-tensor-parallel-size): 0 = tp (Megatron's
  /// default), or 1. With tp > 1 and etp = tp, each expert's matrices are split over the TP
  /// group: after the dispatch all-to-all the TP ranks all-gather their tokens, and
  /// reduce-scatter the experts' partial outputs before the combine.
  int etp = 0;
  int line = 0;  ///< line of the `parallelism` key in its file (0: not given), for errors
  int microBatch = 1;   ///< sequences per micro-batch
  int globalBatch = 1;  ///< sequences per iteration; micro-batches per pipeline = global / (micro * dp)
  std::string schedule = "1f1b";      ///< 1f1b | interleaved
  int virtualStages = 1;              ///< model chunks per GPU with the interleaved schedule
  bool sequenceParallel = false;      ///< TP all-reduce -> reduce-scatter + all-gather
  bool distributedOptimizer = false;  ///< DP all-reduce -> reduce-scatter (grads) + all-gather (params)
  std::string recompute = "none";     ///< none | full (recompute each layer's forward in backward)
  /// Megatron --overlap-grad-reduce: each gradient bucket is reduced as soon as its gradients
  /// are final, under the rest of the backward; false (Megatron's default): every bucket after
  /// the whole backward.
  bool overlapGradReduce = false;
  /// Megatron --overlap-param-gather (distributed optimizer): the parameter all-gathers run
  /// under the next forward, each bucket before the first layer that needs it; false: all
  /// of them after the optimizer step, before the next iteration starts.
  bool overlapParamGather = false;
  /// Megatron --defer-embedding-wgrad-compute: the output layer's weight-gradient GEMMs of the
  /// first `wgradDeferralLimit` micro-batches (0: all) are skipped in their backward and run
  /// together after the last stage's last backward, in the pipeline flush (needs pp > 1).
  bool deferEmbeddingWgrad = false;
  int wgradDeferralLimit = 0;  ///< Megatron --wgrad-deferral-limit; 0: no limit
  /// Megatron --tp-comm-overlap (Transformer Engine userbuffers): each TP all-gather /
  /// reduce-scatter runs concurrently with the GEMMs beside it instead of blocking them.
  bool tpCommOverlap = false;
  /// Per-GEMM overlap methods and SM counts (parallelism.tp_comm_overlap_cfg).
  TpOverlapConfig tpCommOverlapCfg;
};

/// rail-aligned: TP group in a host, DP peers on the same rail (GpuAllocator); in-order: whole
/// hosts first fit with the ranks in Megatron's order (rank r on the job's r-th GPU), as
/// Megatron lays a job out on a cluster; random-hosts; random.
enum class PlacementPolicy { RailAligned, RandomHosts, Random, InOrder };

/// Which GPUs a job's ranks run on.
struct PlacementSpec {
  PlacementPolicy policy = PlacementPolicy::RailAligned;
  /// Explicit GPU range [firstGpu, firstGpu + count); `explicitRange` false = first fit (the
  /// runtime hands out whole free hosts in order).
  bool explicitRange = false;
  uint32_t firstGpu = 0;
};

struct TrainingSpec {
  ModelSpec model;
  GpuSpec gpu;
  ParallelismSpec parallelism;
  int iterations = 1;
  int dtypeBytes = 2;          ///< activations, parameters and gradients (bf16)
  std::string dtype = "bf16";  ///< bf16 | fp16 | fp32 | fp8, as written; gives dtypeBytes
  Bytes dpBucketBytes = 0;     ///< DP gradient bucket; 0 = max(40M, 1M * dp) parameters, as Megatron
  /// Bytes per element of the data-parallel gradient reduction as written (grad_reduce_dtype);
  /// 0 = Megatron's default (gradientReduceBytes()).
  int gradReduceBytes = 0;
  std::string gradReduceDtype;  ///< fp32 | bf16 | fp16 as written; "" = Megatron's default
  /// The DP reduction's bytes per element: as written, else Megatron's default: fp32 (4) for
  /// bf16, fp8 (bf16 parameters) and fp32 training (--bf16 sets
  /// --accumulate-allreduce-grads-in-fp32), fp16 (2) for fp16 training.
  int gradientReduceBytes() const { return gradReduceBytes > 0 ? gradReduceBytes : dtype == "fp16" ? 2 : 4; }
  std::string gradientReduceDtype() const {
    return !gradReduceDtype.empty() ? gradReduceDtype : dtype == "fp16" ? "fp16" : "fp32";
  }
  /// Model the memory-bound kernels of every layer (layer norms, activation, dropout, residual
  /// adds; TransformerModel::elementwiseBytes) at the GPU's memory rate; false leaves them out.
  bool elementwise = true;
  /// Sequence parallelism's backward as Megatron runs it (a modelling switch, not Megatron's):
  /// each column-parallel GEMM's sharded input all-gathered again for its weight gradient, beside
  /// its data gradient, and the reduce-scatter of that data gradient beside the weight gradient
  /// (both asynchronous in Megatron and Transformer Engine). false leaves both out, as fabricsim
  /// did before (the shipped workloads pin it until their figures are regenerated).
  bool spRegather = true;
  /// false: every communication takes zero time (isolates compute and the pipeline bubble).
  bool communication = true;
  /// Collectives per layer and pass at layer granularity ("layer") or one merged collective per
  /// stage pass ("stage": same bytes, far fewer events; for very large runs).
  std::string tpGranularity = "layer";
};

struct TraceSpec {
  std::string path;  ///< the trace JSON, resolved relative to the workload file
};
/// kind: chakra (a Chakra execution trace, one file per rank: PREFIX.<rank>.et).
struct ChakraSpec {
  std::string prefix;      ///< resolved relative to the workload file
  std::string commGroups;  ///< JSON {"pg_name": [ranks]}; empty: none (every collective on all ranks)
  uint32_t ranks = 0;      ///< 0: every PREFIX.<r>.et from r = 0 on
  int iterations = 1;
};

struct WorkloadSpec {
  std::string file;              ///< path it was read from
  std::string name;              ///< defaults to the file's stem
  std::string kind = "pattern";  ///< pattern | collective | training | trace | chakra
  PatternSpec pattern;
  CollectiveSweepSpec collective;
  TrainingSpec training;
  TraceSpec trace;
  ChakraSpec chakra;
  CollectiveTuning tuning;
  /// True when the file gave a `collectives:` block or a calibration: a trace replay then uses
  /// `tuning` instead of the tuning recorded in the trace.
  bool tuningExplicit = false;
  PlacementSpec placement;
  std::string calibrationPath;  ///< optional calibration.yaml (resolved), already applied to tuning/gpu
  Time start = Time::zero();    ///< collective/training/trace: when the job starts
};

}  // namespace fabricsim
