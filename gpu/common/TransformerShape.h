// TransformerShape: the dimensions of one transformer layer as one tensor-parallel rank runs it.
//
// Models: hidden size, FFN size, attention heads and KV heads (GQA), sequence length, gated MLP
// (SwiGLU), micro-batch and tensor-parallel degree, from a named preset (gpt3-175b, llama3-70b,
// llama3-405b: the same shapes as sim/config/ModelPresets, copied because nothing in gpu/ links
// sim/), from a fabricsim training workload YAML (`model:` preset or map, `parallelism: {tp,
// micro_batch}`), or from flags.
// Leaves out: layers, vocabulary and pipeline/data parallelism (they do not change a layer's GEMMs).
// Units: elements (dimensions), sequences (micro-batch).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace fabricsim::gpu {

struct TransformerShape {
  std::string name = "custom";
  int hidden = 0;
  int ffnHidden = 0;  ///< 0: 4 * hidden
  int heads = 0;
  int kvHeads = 0;  ///< 0: heads
  int seqLen = 0;
  bool gatedMlp = false;
  int microBatch = 1;
  int tp = 1;

  /// Fills defaults (ffnHidden, kvHeads) and throws std::invalid_argument naming the first
  /// dimension that is missing, not positive, or not divisible as a TP split needs (heads by tp,
  /// kv heads by tp or tp by kv heads, ffn by tp, hidden by heads).
  void finalize();
  /// Tokens per micro-batch: microBatch * seqLen.
  long tokens() const { return static_cast<long>(microBatch) * seqLen; }
  int headDim() const { return hidden / heads; }

  /// A named model (gpt3-175b, llama3-70b, llama3-405b) with microBatch 1 and tp 1.
  static std::optional<TransformerShape> preset(const std::string& name);
  static std::vector<std::string> presetNames();
  /// Reads `model` and `parallelism.tp` / `parallelism.micro_batch` from a fabricsim training
  /// workload file. Throws std::invalid_argument (with the file name) on a missing file, another
  /// workload kind, or a bad model.
  static TransformerShape fromWorkloadFile(const std::filesystem::path& path);
};

}  // namespace fabricsim::gpu
