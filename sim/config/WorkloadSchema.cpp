// The workload file's keys (DESIGN.md section 5): what WorkloadLoader and its readers accept per
// `kind`, with the ranges they enforce. Ranges of sizes in bytes, times in seconds.
#include "sim/config/Schema.h"
#include "sim/config/SchemaKeys.h"
#include "sim/config/TpOverlapReader.h"
#include "sim/config/WorkloadSpec.h"

namespace fabricsim {
namespace {

using namespace schemakeys;

constexpr double kIntMax = 2147483647;

std::vector<KeySpec> patternKeys() {
  using K = KeyType;
  return when(
      {
          required(choice("pattern", {"permutation", "incast", "all-to-all"}, "", "the traffic pattern")),
          key("message_size", K::Bytes, "1MiB", "bytes per message", 1, kNone, "bytes"),
          key("repetitions", K::Int, "1", "messages per pair, one after another", 1, 1e9),
          key("gap", K::Time, "0", "idle time between a pair's messages", 0, kNone, "s"),
          key("incast", K::Map, "", "pattern incast: who sends to whom"),
          key("incast.senders", K::Int, "0", "senders (0: every other GPU)", 0, kIntMax),
          key("incast.receiver", K::Int, "0", "the receiving GPU rank", 0, kIntMax),
          key("traffic_class", K::Int, "0", "traffic class of the messages", 0, 7),
          key("gpus", K::Map, "every GPU", "the GPUs taking part: {first, count}"),
          key("gpus.first", K::Int, "0", "first GPU rank", 0, kIntMax),
          key("gpus.count", K::Int, "the rest", "GPUs", 2, kIntMax),
          key("qps_per_pair", K::Int, "1", "queue pairs per sender-receiver pair (messages split among them)",
              1, 65536),
      },
      "kind: pattern");
}

std::vector<KeySpec> jobKeys() {
  using K = KeyType;
  std::vector<KeySpec> k{
      key("collectives", K::Map, "h100 defaults", "NCCL's collective tuning (as in calibration files)"),
  };
  for (auto& c : collectiveTuningKeys("collectives")) k.push_back(std::move(c));
  std::vector<KeySpec> rest{
      choice("placement", {"rail-aligned", "in-order", "random-hosts", "random"},
             "rail-aligned, first fit on whole hosts",
             "rail-aligned: TP inside a host, DP peers on one rail. in-order: whole hosts, ranks in Megatron's "
             "order (the next CP/EP/DP peers share a host when tp < GPUs per host). random-hosts: free hosts "
             "drawn at random, like a fragmented scheduler. random: GPUs drawn at random. Or a map {policy, "
             "first_gpu} for an explicit range"),
      choice("placement.policy", {"rail-aligned", "in-order", "random-hosts", "random"}, "rail-aligned",
             "the placement policy"),
      key("placement.first_gpu", K::Int, "0", "the job's GPUs start here (a contiguous range)", 0, kIntMax),
      key("calibration", K::String, "none",
          "calibration file (fabricsim calibrate), relative to this file: its gpu and collectives keys "
          "override the presets, and this file's keys override it"),
  };
  for (auto& r : rest) k.push_back(std::move(r));
  return when(std::move(k), "kind: collective | training | trace | chakra");
}

std::vector<KeySpec> collectiveKeys() {
  using K = KeyType;
  return when(
      {
          required(choice("operation",
                          {"all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "sendrecv"},
                          "", "the collective (nccl-tests' *_perf)")),
          choice("algorithm", {"auto", "ring", "tree", "hierarchical", "nvls", "nvls_tree", "pat"}, "auto",
                 "the algorithm (also collectives.algorithm)"),
          key("sizes", K::Map, "1MiB to 1GiB, factor 2", "the message sizes: {min, max, factor | step}"),
          key("sizes.min", K::Bytes, "1MiB", "smallest size (nccl-tests -b)", 1, kNone, "bytes"),
          key("sizes.max", K::Bytes, "1GiB", "largest size (nccl-tests -e)", 1, kNone, "bytes"),
          above(key("sizes.factor", K::Double, "2", "multiplier between sizes (nccl-tests -f)", 1)),
          key("sizes.step", K::Bytes, "", "or an increment between sizes (nccl-tests -i)", 1, kNone, "bytes"),
          key("ranks", K::Int, "every GPU", "ranks of the job", 2, kIntMax),
          key("hosts", K::Int, "", "or hosts of the job (with gpus_per_host)", 1, kIntMax),
          key("gpus_per_host", K::Int, "the topology's", "GPUs per host with `hosts`", 1, 1024),
          key("warmup", K::Int, "1", "untimed calls per size (nccl-tests -w)", 0, 1e6),
          key("iterations", K::Int, "5", "timed calls per size (nccl-tests -n)", 1, 1e6),
          choice("data_type",
                 {"float", "half", "bfloat16", "double", "int8", "uint8", "int32", "uint32", "int64",
                  "uint64", "fp8_e4m3", "fp8_e5m2"},
                 "float", "element type (nccl-tests -d)"),
          key("root", K::Int, "0", "broadcast root rank", 0, kIntMax),
      },
      "kind: collective");
}

std::vector<KeySpec> trainingKeys() {
  using K = KeyType;
  std::vector<KeySpec> k{
      required(key("model", K::Map, "", "a model preset name, or a map of the model's shape")),
      key("model.preset", K::String, "", "start from this preset; the other keys override it"),
      key("model.layers", K::Int, "", "transformer layers (required without a preset)", 1, kIntMax),
      key("model.hidden", K::Int, "", "hidden size (required without a preset)", 1, kIntMax),
      key("model.ffn_hidden", K::Int, "4 x hidden", "MLP hidden size", 1, kIntMax),
      key("model.heads", K::Int, "", "attention heads (required without a preset)", 1, kIntMax),
      key("model.kv_heads", K::Int, "heads", "key/value heads (fewer: grouped-query attention)", 1, kIntMax),
      key("model.seq_len", K::Int, "", "sequence length (required without a preset)", 1, kIntMax),
      key("model.vocab", K::Int, "0", "vocabulary (0: no embedding and output layer)", 0, kIntMax),
      key("model.gated_mlp", K::Bool, "false", "SwiGLU (three FFN matrices) instead of GELU (two)"),
      key("model.causal", K::Bool, "true", "causal attention (half the score matrix)"),
      key("model.tied_embeddings", K::Bool, "true", "input and output embeddings shared"),
      key("model.experts", K::Int, "0", "MoE experts per layer (0: dense)", 0, 1e6),
      key("model.top_k", K::Int, "min(2, experts)", "experts per token", 1, 1e6),
      key("model.moe_ffn_hidden", K::Int, "ffn_hidden", "an expert's MLP hidden size", 1, kIntMax),
      key("model.capacity_factor", K::Double, "0 (no drop)", "expert capacity factor", 0, 1000),
      key("gpu", K::Map, "h100-sxm", "a GPU preset name, or a map {preset, figures}"),
      key("gpu.preset", K::String, "h100-sxm", "start from this preset"),
  };
  for (auto& g : gpuFigureKeys("gpu")) k.push_back(std::move(g));
  const std::string p = "parallelism.";
  std::vector<KeySpec> par{
      key("parallelism", K::Map, "none", "how the model is split (Megatron-LM's arguments)"),
      key(p + "tp", K::Int, "1", "tensor parallel size", 1, kIntMax),
      key(p + "pp", K::Int, "1", "pipeline parallel size", 1, kIntMax),
      key(p + "dp", K::Int, "1", "data parallel size", 1, kIntMax),
      key(p + "cp", K::Int, "1", "context parallel size", 1, kIntMax),
      key(p + "ep", K::Int, "1", "expert parallel size", 1, kIntMax),
      key(p + "etp", K::Int, "tp", "expert tensor parallel size: 1 or tp", 1, kIntMax),
      key(p + "micro_batch", K::Int, "1", "sequences per micro-batch", 1, kIntMax),
      key(p + "global_batch", K::Int, "micro_batch x dp", "sequences per iteration", 1, kIntMax),
      choice(p + "schedule", {"1f1b", "interleaved"}, "1f1b", "pipeline schedule"),
      key(p + "virtual_stages", K::Int, "1", "model chunks per stage (interleaved)", 1, kIntMax),
      key(p + "sequence_parallel", K::Bool, "false", "Megatron sequence parallelism"),
      key(p + "distributed_optimizer", K::Bool, "false", "ZeRO-1 distributed optimizer"),
      choice(p + "recompute", {"none", "full"}, "none", "activation recomputation"),
      key(p + "overlap_grad_reduce", K::Bool, "false", "overlap the DP gradient reduction with backward"),
      key(p + "overlap_param_gather", K::Bool, "false", "overlap the parameter all-gather with forward"),
      key(p + "defer_embedding_wgrad_compute", K::Bool, "false", "defer the output layer's weight gradients"),
      key(p + "wgrad_deferral_limit", K::Int, "0", "micro-batches deferred at most (0: all)", 0, kIntMax),
      key(p + "tp_comm_overlap", K::Bool, "false", "Transformer Engine's TP communication overlap"),
      key(p + "tp_comm_overlap_cfg", K::Map, "Megatron's defaults", "per-GEMM overlap settings"),
  };
  for (auto& x : par) k.push_back(std::move(x));
  for (const char* slot : {"qkv_fprop", "proj_fprop", "fc1_fprop", "fc2_fprop", "qkv_dgrad", "qkv_wgrad",
                           "proj_dgrad", "fc1_dgrad", "fc1_wgrad", "fc2_dgrad"}) {
    const std::string s = p + "tp_comm_overlap_cfg." + slot;
    k.push_back(key(s, K::Map, "", std::string("the ") + slot + " GEMM's overlap"));
    k.push_back(choice(s + ".method", {"ring_exchange", "pipeline", "bulk"}, "by GEMM", "overlap method"));
    k.push_back(key(s + ".num_sm", K::Int, "1", "SMs of the communication kernel (TE's cap: 32)", 1, 32));
    k.push_back(key(s + ".set_sm_margin", K::Bool, "false", "the GEMM leaves those SMs free"));
    k.push_back(key(s + ".num_splits", K::Int, "4", "chunks of the pipelined GEMM", 1, 64));
  }
  std::vector<KeySpec> rest{
      key("iterations", K::Int, "1", "training iterations", 1, 1e6),
      choice("dtype", {"bf16", "fp16", "fp32", "fp8"}, "bf16", "compute precision"),
      key("dp_bucket", K::Bytes, "max(40M, 1M x dp) parameters' gradients", "DP gradient bucket", 1, kNone,
          "bytes"),
      key("communication", K::Bool, "true", "simulate the collectives (false: compute only)"),
      choice("tp_granularity", {"layer", "stage"}, "layer", "TP collectives per layer, or one per stage"),
      choice("grad_reduce_dtype", {"fp32", "bf16", "fp16"}, "fp32 (fp16 with dtype fp16)",
             "gradient reduction precision"),
      key("elementwise", K::Bool, "true", "model the memory-bound kernels (norms, activations)"),
      key("sp_regather", K::Bool, "true", "sequence parallelism re-gathers activations in backward"),
  };
  for (auto& x : rest) k.push_back(std::move(x));
  return when(std::move(k), "kind: training");
}

std::vector<KeySpec> workloadKeys() {
  using K = KeyType;
  std::vector<KeySpec> k{
      required(
          choice("kind", {"pattern", "collective", "training", "trace", "chakra"}, "",
                 "what the workload is: a traffic pattern, an nccl-tests sweep, a training job, a trace, "
                 "Chakra execution traces")),
      key("name", K::String, "the file's stem", "workload name"),
      key("start", K::Time, "0", "when the workload starts", 0, kNone, "s"),
  };
  for (auto* group : {patternKeys, jobKeys, collectiveKeys, trainingKeys})
    for (auto& x : group()) k.push_back(std::move(x));
  for (auto& x : when({required(key("chakra", K::String, "", "the .et files' prefix, relative to this file")),
                       key("comm_groups", K::String, "none", "the communicator groups JSON file"),
                       key("ranks", K::Int, "the files found", "ranks", 1, 16777216),
                       key("iterations", K::Int, "1", "times the traces are replayed", 1, 1048576)},
                      "kind: chakra"))
    k.push_back(std::move(x));
  k.push_back(required(key("trace", K::String, "", "the trace JSON file, relative to this file", kNone, kNone,
                           "", "kind: trace")));
  return k;
}

}  // namespace

const Schema& workloadSchema() {
  static const Schema s("workload", workloadKeys());
  return s;
}

}  // namespace fabricsim
