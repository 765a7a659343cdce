#include "sim/config/ModelPresets.h"

namespace fabricsim {
namespace {

ModelSpec shape(const char* name, int layers, int hidden, int ffn, int heads, int kvHeads, int seqLen,
                int vocab, bool gated, bool tied) {
  ModelSpec m;
  m.preset = name;
  m.layers = layers;
  m.hidden = hidden;
  m.ffnHidden = ffn;
  m.heads = heads;
  m.kvHeads = kvHeads;
  m.seqLen = seqLen;
  m.vocab = vocab;
  m.gatedMlp = gated;
  m.tiedEmbeddings = tied;
  return m;
}

/// Mixtral 8x7B (Jiang et al. 2024, "Mixtral of Experts", Table 1): 32 layers, dim 4096,
/// 32 heads of 128, 8 KV heads, SwiGLU experts of hidden 14336, 8 experts, top 2, vocabulary
/// 32000; trained here at sequence 4096 (the paper's context is 32768; NeMo's Mixtral
/// pre-training recipe runs 4096).
ModelSpec mixtral() {
  ModelSpec m = shape("mixtral-8x7b", 32, 4096, 14336, 32, 8, 4096, 32000, true, false);
  m.experts = 8;
  m.topK = 2;
  return m;
}

const std::vector<ModelSpec>& presets() {
  // Embeddings: GPT-3 ties its output layer to the input embedding (as GPT-2 and Megatron's
  // default); Llama 3 (70B, 405B) and Mixtral untie them (tie_word_embeddings: false in their
  // released configs).
  static const std::vector<ModelSpec> all = {
      shape("gpt3-175b", 96, 12288, 49152, 96, 96, 2048, 50257, false, true),
      shape("llama3-70b", 80, 8192, 28672, 64, 8, 8192, 128256, true, false),
      shape("llama3-405b", 126, 16384, 53248, 128, 8, 8192, 128256, true, false),
      mixtral(),
  };
  return all;
}

}  // namespace

std::optional<ModelSpec> modelPreset(std::string_view name) {
  for (const auto& m : presets())
    if (m.preset == name) return m;
  return std::nullopt;
}

const std::vector<std::string>& modelPresetNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& m : presets()) out.push_back(m.preset);
    return out;
  }();
  return names;
}

}  // namespace fabricsim
